import { Elysia } from "elysia";
import { auditRoutes } from "./routes/audit";
import type { CorrectionsAdminDeps } from "./routes/operator";
import { pinRoutes } from "./routes/pins";
import { reportQueueRoutes } from "./routes/queue";

/**
 * Operator routes for corrections (mounted with the other /admin routes when ADMIN_TOKEN is
 * set): the report queue, pinned artwork and fields, pins in force, a brand's audit trail.
 */
export function correctionsAdminController(deps: CorrectionsAdminDeps) {
  return new Elysia().use(reportQueueRoutes(deps)).use(pinRoutes(deps)).use(auditRoutes(deps));
}
