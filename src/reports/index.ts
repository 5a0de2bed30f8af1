import { Elysia } from "elysia";
import { type RateLimitDeps, rateLimitPlugin } from "../guard";
import { cappedBody } from "../http/body-limits";
import { ErrorBody, RateLimitedBody } from "../http/errors";
import { RATE_LIMITS } from "../quota/limits";
import { OwnReports, PageQuery, ReportBody, ReportFiled } from "./model";
import { type CorrectionsService, NOTE_MAX } from "./service";
import { type OwnReport, REPORT_KINDS, type Report } from "./store/port";

/** What a reporter sees of any report (a user's kind: the service files none for them). */
const reporterFields = (r: Report) => ({
  id: r.id,
  slug: r.slug,
  domain: r.domain,
  kind: r.kind as (typeof REPORT_KINDS)[number],
  status: r.status,
  votes: r.votes,
});

/** A report as the account that filed it sees it: its own notes, no other reporter's data. */
function ownView(r: OwnReport, accountId: string) {
  return {
    ...reporterFields(r),
    notes: r.notes.filter((n) => n.accountId === accountId).map(({ text, at }) => ({ text, at })),
    filedAt: r.filedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    decidedAt: r.decidedAt,
  };
}

/**
 * POST /v1/reports: a signed-in user or an API key reports a problem with a brand's data, or a
 * company the catalog lacks; GET /v1/reports: the caller's own reports and what became of them.
 */
export function reportsController(deps: RateLimitDeps & { corrections: CorrectionsService }) {
  return new Elysia({ prefix: "/v1", tags: ["catalog"] })
    .use(rateLimitPlugin(deps))
    .onParse(({ request }) => cappedBody(request))
    .post(
      "/reports",
      async ({ principal, body, set }) => {
        const { report: r, voted, queued } = await deps.corrections.fileReport(principal, body);
        set.status = 202;
        return { ...reporterFields(r), voted, discoveryQueued: queued };
      },
      {
        accountRateLimit: RATE_LIMITS.reports,
        body: ReportBody,
        response: {
          202: ReportFiled,
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
        detail: {
          summary: "Report a problem with a brand's logo or data, or a company we are missing",
          description:
            "Accepts X-API-Key or Authorization: Bearer (the console's access token). Name the brand by `slug` or `domain` (exactly one; unknown: 404 service_not_found / domain_not_found), " +
            `the \`kind\` of problem (${REPORT_KINDS.join(", ")}), optionally an https \`url\` of the right artwork and a \`note\`. ` +
            "A company the catalog does not have is reported with kind missing_brand and its `domain` (a domain a brand has: 409 brand_exists naming its `slug`); when discovery is on, its website is queued for logo discovery, and the report is in the operators' queue either way. " +
            "One open report per brand (or domain) and kind: a later filing joins it, adding one vote per account (`voted`) and attaching its url and note. Answers 202: an operator reviews the report; the url is never fetched before an operator accepts it. " +
            `Bad input is 400 invalid_report with \`field\` naming it: no or both of slug and domain, an unknown kind, a url that is not https or names an IP address or a local host, a note over ${NOTE_MAX} characters. At most ${RATE_LIMITS.reports.limit} reports per account per UTC day (429 beyond). GET /v1/reports lists the caller's reports and their status.`,
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    )
    .get(
      "/reports",
      async ({ principal, query }) => {
        const p = await deps.corrections.reportsOf(principal, query.limit ?? 20, query.cursor);
        return { items: p.items.map((r) => ownView(r, principal.accountId)), next: p.next };
      },
      {
        accountRateLimit: RATE_LIMITS.ownReports,
        query: PageQuery,
        response: { 200: OwnReports, 401: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Your reports and what became of them",
          description:
            "The reports this account filed or joined (every key of the account and the console see the same list), newest first, `limit` (1 to 100, default 20) a page: each with its status (open, accepted, rejected), votes, when you filed it, the notes you attached, and when an operator decided it. A full page carries `next`: pass it as `cursor` for the next page. " +
            `Accepts X-API-Key or Authorization: Bearer. Not metered against the daily quotas; at most ${RATE_LIMITS.ownReports.limit} calls a minute per account (429 beyond).`,
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    );
}
