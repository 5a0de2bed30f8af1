import { t } from "elysia";
import type { Variant } from "../../catalog/built-catalog";
import { ErrorBody } from "../../http/errors";
import { AcceptBody, Accepted, ReportQueue, ReportRecord, ReportStatusQuery } from "../model";
import { type CorrectionsAdminDeps, operatorOf, operatorRoutes } from "./operator";

/** The report queue: newest first, accept (with a pin) or reject (operator). */
export function reportQueueRoutes(deps: CorrectionsAdminDeps) {
  const { corrections } = deps;
  const operator = operatorOf(deps);
  return operatorRoutes(deps)
    .get(
      "/reports",
      async ({ query }) => {
        const p = await corrections.reports(query.status, query.limit ?? 100, query.cursor);
        return { items: p.items.map((r) => corrections.reportView(r)), next: p.next };
      },
      {
        query: ReportStatusQuery,
        response: { 200: ReportQueue, 401: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "The report queue (operator)",
          description:
            "Newest first, optionally of one status (open, accepted, rejected), `limit` a page (default 100; a full page carries `next`, passed as `cursor` for the next). Each report carries its votes, the reporters' urls and notes, and the brand's current artwork: per variant its source and sha256, the provenance entries, and the pins in force. Kinds: the users' (missing_brand: a company the catalog lacks, named by `domain`; `brand` is the one discovery or a build has made for it since, else null) and pin_orphaned, filed by the service when a catalog build retired a pinned brand and the pin could not move to the brand its slug redirects to.",
        },
      },
    )
    .post(
      "/reports/:id/accept",
      ({ params, body, request }) =>
        corrections.accept(params.id, operator(request), {
          pin: body?.pin,
          variant: body?.variant as Variant | undefined,
          url: body?.url,
        }),
      {
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        body: AcceptBody,
        response: {
          200: Accepted,
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Accept a report (operator)",
          description:
            "With `{ \"pin\": true }` the report's first url (or `url`, one of its urls) is fetched now (discovery's guarded fetcher: public addresses only, size and time caps) and pinned as the brand's `variant` (default color) in the same step; artwork that cannot be fetched or is not a usable SVG or PNG is 400 invalid_pin and the report stays open. 409 report_decided for a report accepted or rejected already.",
        },
      },
    )
    .post(
      "/reports/:id/reject",
      ({ params, request }) => corrections.reject(params.id, operator(request)),
      {
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        response: {
          200: ReportRecord,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
        detail: { summary: "Reject a report (operator)" },
      },
    );
}
