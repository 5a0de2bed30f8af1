import { t } from "elysia";
import {
  NewPublishableKeyResponse,
  PublishableKeyBody,
  PublishableKeyView,
} from "../../accounts/model";
import { createPublishable, revokePublishable } from "../../accounts/routes/account";
import { ErrorBody } from "../../http/errors";

import { type AdminDeps, operatorRoutes } from "./operator";

/** API keys and publishable keys: issue, regenerate, revoke. */
export function keyRoutes(deps: AdminDeps) {
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
