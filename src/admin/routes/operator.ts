import { Elysia } from "elysia";
import type { AccountService } from "../../accounts/service";
import { type Operators, requireOperator } from "../../guard";
import { cappedBody } from "../../http/body-limits";
import { invalid } from "../../platform/domain-errors";
import { limitsProblem } from "../../quota/limits";

/** The body as an object (before validation it may be anything JSON). */
const fieldsOf = (body: unknown) =>
  (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;

export interface AdminDeps {
  accounts: AccountService;
  operators: Operators;
}

/**
 * Operator routes, mounted only when ADMIN_TOKEN is set. The token is checked before the body
 * is parsed (parse) and before it is validated (transform; routes without a body): a caller
 * without it learns nothing of the routes' rules. An error thrown while parsing reaches the
 * error plugin as its cause.
 */
export function operatorRoutes(deps: AdminDeps) {
  return new Elysia({ prefix: "/admin", tags: ["admin"] })
    .onParse(({ request }) => {
      requireOperator(request, deps.operators);
      return cappedBody(request);
    })
    .onTransform(({ request, body }) => {
      requireOperator(request, deps.operators);
      // `limits` as sent: schema validation would drop unknown buckets and turn "2" into 2
      const { tier, limits } = fieldsOf(body);
      const problem = limitsProblem(tier, limits);
      if (problem) throw invalid(`Invalid body field ${problem}`);
    });
}
