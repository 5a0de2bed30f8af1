import { t } from "elysia";
import { LimitsSchema, TierSchema } from "../../accounts/model";
import { accountNotFound } from "../../accounts/service";
import { ErrorBody } from "../../http/errors";
import { AccountViewSchema } from "../model";
import { accountView, LIST_LIMIT } from "../views";

import { type AdminDeps, operatorRoutes } from "./operator";

/** Accounts: create (with their first key), list, read, change tier and limits. */
export function accountRoutes(deps: AdminDeps) {
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
