import { Elysia, t } from "elysia";
import {
  LimitsSchema,
  NewPublishableKeyResponse,
  PublishableKeyBody,
  PublishableKeyView,
  TierSchema,
} from "../accounts/model";
import { createPublishable, revokePublishable } from "../accounts/routes/account";
import { type AccountService, accountNotFound } from "../accounts/service";
import { type Operators, requireOperator } from "../guard";
import { cappedBody } from "../http/body-limits";
import { ErrorBody } from "../http/errors";
import { invalid } from "../platform/domain-errors";
import { limitsProblem } from "../quota/limits";
import { AccountViewSchema } from "./model";
import { accountView, LIST_LIMIT } from "./views";

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
function operatorRoutes(deps: AdminDeps) {
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

/** Accounts: create (with their first key), list, read, change tier and limits. */
function accountRoutes(deps: AdminDeps) {
  return operatorRoutes(deps)
    .post(
      "/keys",
      async ({ body, set }) => {
        const issued = await deps.accounts.createAccountWithKey({
          tier: body.tier,
          email: body.email ?? null,
          limits: body.limits ?? null,
        });
        set.status = 201;
        return issued;
      },
      {
        body: t.Object({
          tier: TierSchema,
          email: t.Optional(t.String({ format: "email", maxLength: 254 })),
          limits: t.Optional(LimitsSchema),
        }),
        response: {
          201: t.Object({
            accountId: t.String(),
            keyId: t.String(),
            apiKey: t.String({ description: "Shown once; only its hash is stored" }),
            tier: TierSchema,
          }),
          401: ErrorBody,
          422: ErrorBody,
        },
        detail: { summary: "Create an account with one API key (operator)" },
      },
    )
    .get(
      "/accounts",
      async ({ query }) => ({
        accounts: (await deps.accounts.listAccounts({ email: query.email, limit: LIST_LIMIT })).map(
          accountView,
        ),
      }),
      {
        query: t.Object({ email: t.Optional(t.String({ maxLength: 254 })) }),
        response: {
          200: t.Object({ accounts: t.Array(AccountViewSchema) }),
          401: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "List accounts, oldest first, optionally by e-mail (operator)",
          description: `At most ${LIST_LIMIT} accounts; \`email\` matches case-insensitively.`,
        },
      },
    )
    .get(
      "/accounts/:accountId",
      async ({ params }) => {
        const a = await deps.accounts.getAccountWithEmail(params.accountId);
        if (!a) throw accountNotFound(params.accountId);
        return accountView(a);
      },
      {
        params: t.Object({ accountId: t.String({ maxLength: 64 }) }),
        response: { 200: AccountViewSchema, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: "One account with its keys (operator)" },
      },
    )
    .patch(
      "/accounts/:accountId",
      async ({ params, body }) => {
        const a = await deps.accounts.changeTier(params.accountId, body.tier, body.limits ?? null);
        return { accountId: a.id, tier: a.tier, limits: a.limits };
      },
      {
        body: t.Object({ tier: TierSchema, limits: t.Optional(LimitsSchema) }),
        response: {
          200: t.Object({
            accountId: t.String(),
            tier: TierSchema,
            limits: t.Union([LimitsSchema, t.Null()]),
          }),
          401: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
        },
        detail: { summary: "Change an account's tier and custom limits (operator)" },
      },
    );
}

/** API keys and publishable keys: issue, regenerate, revoke. */
function keyRoutes(deps: AdminDeps) {
  return operatorRoutes(deps)
    .post(
      "/accounts/:accountId/keys",
      async ({ params, set }) => {
        const r = await deps.accounts.regenerateKey(params.accountId);
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return {
          accountId: params.accountId,
          keyId: r.keyId,
          apiKey: r.apiKey,
          revokedKeyIds: r.previous,
        };
      },
      {
        params: t.Object({ accountId: t.String({ maxLength: 64 }) }),
        response: {
          201: t.Object({
            accountId: t.String(),
            keyId: t.String(),
            apiKey: t.String({ description: "Shown once; only its hash is stored" }),
            revokedKeyIds: t.Array(t.String(), {
              description: "The keys that were active and are now revoked",
            }),
          }),
          401: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Regenerate an account's API key (operator)",
          description:
            "Revokes every active key of the account and issues a new one, returned once. Today's quota usage carries over to the new key (regenerating never resets the day's counts).",
        },
      },
    )
    .delete(
      "/keys/:keyId",
      async ({ params }) => {
        return await deps.accounts.revokeKey(params.keyId);
      },
      {
        params: t.Object({ keyId: t.String({ maxLength: 64 }) }),
        response: {
          200: t.Object({
            accountId: t.String(),
            keyId: t.String(),
            revokedAt: t.String({ format: "date-time" }),
          }),
          401: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Revoke one API key (operator)",
          description:
            "The key stops working at once on this instance (other instances: within KEY_CACHE_TTL_MS). Revoking a revoked key answers its revocation time again.",
        },
      },
    )
    .post(
      "/accounts/:accountId/publishable-keys",
      async ({ params, body, set }) => {
        const r = await createPublishable(deps.accounts, params.accountId, body);
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return r;
      },
      {
        params: t.Object({ accountId: t.String({ maxLength: 64 }) }),
        body: PublishableKeyBody,
        response: {
          201: NewPublishableKeyResponse,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Create a publishable key for an account (operator)",
          description:
            "Same as POST /auth/publishable-keys for the account: usable only on /i/ from the given origins; answered once.",
        },
      },
    )
    .delete(
      "/publishable-keys/:keyId",
      ({ params }) => revokePublishable(deps.accounts, null, params.keyId),
      {
        params: t.Object({ keyId: t.String({ maxLength: 64 }) }),
        response: { 200: PublishableKeyView, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: "Revoke a publishable key (operator)" },
      },
    );
}

/** /admin/*: the operator routes. */
export function adminController(deps: AdminDeps) {
  return new Elysia().use(accountRoutes(deps)).use(keyRoutes(deps));
}
