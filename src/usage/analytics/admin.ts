import { Elysia } from "elysia";
import { type Operators, requireOperator } from "../../guard";
import { ErrorBody } from "../../http/errors";
import { decimalQuery } from "../../http/params";
import type { UsageLog } from "../log/port";
import { MISSES_DESCRIPTION, rankedMisses } from "./misses";
import { MissesQuery, MissesResponse } from "./model";

/** GET /admin/analytics/misses: the misses of every account (mounted with the admin routes). */
export function analyticsAdminController(deps: { usage: UsageLog; operators: Operators }) {
  return new Elysia({ prefix: "/admin/analytics", tags: ["admin"] })
    .use(decimalQuery)
    .onTransform(({ request }) => {
      requireOperator(request, deps.operators);
    })
    .get("/misses", ({ query }) => rankedMisses(deps.usage, null, query), {
      query: MissesQuery,
      decimalQuery: MissesQuery,
      response: { 200: MissesResponse, 401: ErrorBody, 422: ErrorBody },
      detail: {
        summary: "What every account asked for in vain (operator)",
        description: `${MISSES_DESCRIPTION} Across all accounts: the to-do list for catalog growth.`,
      },
    });
}
