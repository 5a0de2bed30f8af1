import { ErrorBody } from "../../http/errors";
import { AuditPage, AuditQuery, SlugParams } from "../model";
import { type CorrectionsAdminDeps, operatorRoutes } from "./operator";

/** A brand's audit trail (operator). */
export function auditRoutes(deps: CorrectionsAdminDeps) {
  const { corrections } = deps;
  return operatorRoutes(deps).get(
    "/brands/:slug/audit",
    ({ params, query }) => corrections.auditOf(params.slug, query.limit ?? 100, query.cursor),
    {
      params: SlugParams,
      query: AuditQuery,
      response: { 200: AuditPage, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: {
        summary: "A brand's audit trail (operator)",
        description:
          "Every change to the brand, newest first, `limit` a page (1 to 1000, default 100): a full page carries `next`, passed as `cursor` for the next page (stable while events are added). Types: pin_set, pin_replaced, pin_removed, pin_moved (a build retired the pinned brand; its pin moved to the brand its slug redirects to), pin_orphaned (it could not: reported in the queue), report_accepted, report_rejected, discovery_stored, discovery_refreshed (different artwork found), discovery_refused (an attempt refused or failed), takedown, catalog_changed (a build added, changed or retired the brand). Each names who (`by`: the operator's identity, discovery, catalog, system), and the value `before` and `after` (artwork by sha256 and provenance). The trail is append-only. It includes the events of slugs the brand had (retired slugs redirecting to it); a brand the catalog no longer has answers by its slug.",
      },
    },
  );
}
