import { Elysia, t } from "elysia";
import { ErrorBody } from "../../http/errors";
import {
  MeResponse,
  NewKeyResponse,
  NewPublishableKeyResponse,
  PasswordBody,
  PublishableKeyBody,
  PublishableKeyList,
  PublishableKeyView,
  publishableView,
} from "../model";
import type { AccountService } from "../service";
import { type AccountsControllerDeps, authMacros, BEARER, noBearer, noStore } from "./auth-base";

/** Creating a publishable key (too_many_keys past the account's maximum). */
export async function createPublishable(
  accounts: AccountService,
  accountId: string,
  body: { origins: string[]; dailyCap?: number | null },
) {
  const k = await accounts.createPublishableKey(accountId, body.origins, body.dailyCap ?? null);
  return { ...publishableView(k), publishableKey: k.publishableKey };
}

/** Revoking a publishable key (key_not_found for an unknown, or another account's, key). */
export async function revokePublishable(
  accounts: AccountService,
  accountId: string | null,
  keyId: string,
) {
  return publishableView(await accounts.revokePublishableKey(accountId, keyId));
}

const PUBLISHABLE_DOC =
  "Publishable keys (pk_…) work only on /i/ image URLs (`/i/{slug}.png?key=pk_…`), only when the request's Origin (else Referer) host matches one of `origins`, and count against the account's own daily limits (its API key's buckets); `dailyCap` adds a cap of the key's own (429 past it). They are meant to be public in pages, so anyone can copy one: the origin check stops other sites' pages from using it in browsers, not a forger (docs/images.md).";
/** The caller's own account: profile, API key, publishable keys, deletion. */
export function ownAccountRoutes(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(authMacros(deps))
    .get(
      "/auth/me",
      async ({ principal, set }) => {
        const me = await deps.auth.me(principal.accountId);
        if (!me) throw noBearer();
        noStore(set);
        return me;
      },
      {
        bearer: true,
        response: { 200: MeResponse, 401: ErrorBody },
        detail: {
          summary: "The caller's account and its active keys (never a key or a hash)",
          security: BEARER,
        },
      },
    )
    .post(
      "/auth/api-key/regenerate",
      async ({ principal, set }) => {
        const r = await deps.accounts.regenerateKey(principal.accountId);
        set.status = 201;
        noStore(set);
        return { keyId: r.keyId, apiKey: r.apiKey };
      },
      {
        bearer: true,
        response: { 201: NewKeyResponse, 401: ErrorBody },
        detail: {
          summary: "Replace the API key",
          description:
            "Revokes the active key at once on this instance (other instances within KEY_CACHE_TTL_MS) and answers the new key once. Today's quota usage carries over to the new key.",
          security: BEARER,
        },
      },
    )
    .post(
      "/auth/publishable-keys",
      async ({ principal, body, set }) => {
        const r = await createPublishable(deps.accounts, principal.accountId, body);
        set.status = 201;
        noStore(set);
        return r;
      },
      {
        bearer: true,
        body: PublishableKeyBody,
        response: {
          201: NewPublishableKeyResponse,
          401: ErrorBody,
          409: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Create a publishable key for <img> tags",
          description: `${PUBLISHABLE_DOC} The key is answered once (only its hash is stored). At most 20 active keys per account: 409 too_many_keys.`,
          security: BEARER,
        },
      },
    )
    .get(
      "/auth/publishable-keys",
      async ({ principal, set }) => {
        const a = await deps.accounts.getAccount(principal.accountId);
        if (!a) throw noBearer();
        noStore(set);
        return { keys: (a.publishableKeys ?? []).map(publishableView) };
      },
      {
        bearer: true,
        response: { 200: PublishableKeyList, 401: ErrorBody },
        detail: {
          summary: "The account's publishable keys (revoked ones included; never a key)",
          security: BEARER,
        },
      },
    )
    .delete(
      "/auth/publishable-keys/:keyId",
      ({ principal, params }) =>
        revokePublishable(deps.accounts, principal.accountId, params.keyId),
      {
        bearer: true,
        params: t.Object({ keyId: t.String({ maxLength: 64 }) }),
        response: { 200: PublishableKeyView, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Revoke a publishable key",
          description:
            "It stops working at once on this instance (other instances within KEY_CACHE_TTL_MS). 404 key_not_found for a key of another account or none.",
          security: BEARER,
        },
      },
    )
    .delete(
      "/auth/me",
      async ({ principal, body, set }) => {
        await deps.auth.deleteAccount(principal.accountId, body.password);
        set.status = 204;
      },
      {
        bearer: true,
        body: PasswordBody,
        response: {
          204: t.Void({ description: "Deleted" }),
          401: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Delete the account",
          description:
            "Needs the password (401 invalid_credentials otherwise). Keys and tokens are revoked and the account's personal data (e-mail address, password hash) becomes unreadable everywhere, the event log included: its per-account data key is destroyed. Usage history stays under the account id.",
          security: BEARER,
        },
      },
    );
}
