import { Elysia } from "elysia";
import { type RateLimitDeps, rateLimitPlugin } from "../guard";
import { cappedBody } from "../http/body-limits";
import { ErrorBody, RateLimitedBody } from "../http/errors";
import { RATE_LIMITS } from "../quota/limits";
import { ReportBody, ReportFiled } from "./model";
import { REPORT_KINDS } from "./port";
import type { CorrectionsService } from "./service";

/** POST /v1/reports: a signed-in user or an API key reports a problem with a brand's data. */
export function reportsController(deps: RateLimitDeps & { corrections: CorrectionsService }) {
  return new Elysia({ prefix: "/v1", tags: ["catalog"] })
    .use(rateLimitPlugin(deps))
    .onParse(({ request }) => cappedBody(request))
    .post(
      "/reports",
      async ({ principal, body, set }) => {
        const r = await deps.corrections.fileReport(principal, body);
        set.status = 202;
        return { id: r.id, slug: r.slug, kind: r.kind, status: r.status, votes: r.votes };
      },
      {
        accountRateLimit: RATE_LIMITS.reports,
        body: ReportBody,
        response: {
          202: ReportFiled,
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
        detail: {
          summary: "Report a problem with a brand's logo or data",
          description:
            "Accepts X-API-Key or Authorization: Bearer (the console's access token). Name the brand by `slug` or `domain` (exactly one; unknown: 404 service_not_found / domain_not_found), " +
            `the \`kind\` of problem (${REPORT_KINDS.join(", ")}), optionally an https \`url\` of the right artwork and a \`note\`. ` +
            "The same open report (brand, kind and url) filed again adds a vote instead of a new report. Answers 202: an operator reviews the report; the url is never fetched before an operator accepts it. " +
            `Bad input is 400 invalid_report with \`field\` naming it: no or both of slug and domain, an unknown kind, a url that is not https or names an IP address or a local host, a note over 1000 characters. At most ${RATE_LIMITS.reports.limit} reports per account per UTC day (429 beyond).`,
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    );
}
