import { Elysia, t } from "elysia";
import { bearerOf, rateLimitPlugin } from "../guard";
import { cappedBody } from "../http/body-limits";
import { type AddressSource, clientIp } from "../http/client-ip";
import { ErrorBody, RateLimitedBody } from "../http/errors";
import { unauthenticated } from "../platform/domain-errors";
import { RATE_LIMITS } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { RateLimiter } from "../quota/rate-limit";
import { type AuthService, REGISTRATIONS } from "./auth";
import type { AccessTokens } from "./jwt";
import {
  Accepted,
  Credentials,
  EmailBody,
  JwksResponse,
  MeResponse,
  NewKeyResponse,
  NewPublishableKeyResponse,
  PasswordBody,
  PublishableKeyBody,
  PublishableKeyList,
  PublishableKeyView,
  publishableView,
  RefreshBody,
  RegisteredResponse,
  ResetBody,
  TokenBody,
  TokenPairResponse,
  Verified,
} from "./model";
import type { AccountService } from "./service";

export interface AccountsControllerDeps {
  auth: AuthService;
  access: AccessTokens;
  accounts: AccountService;
  limiter: RateLimiter;
  upgradeUrl: string;
  trustProxy: boolean;
}

const noBearer = () =>
  unauthenticated(
    "invalid_api_key",
    "Missing or invalid access token. Pass Authorization: Bearer <accessToken> from POST /auth/login.",
  );

const bearerCallers = new WeakMap<Request, Principal>();

/** Authenticates the bearer token once per request (before the body is read, and in transform). */
async function requireBearer(auth: AuthService, request: Request): Promise<void> {
  if (bearerCallers.has(request)) return;
  const token = bearerOf(request.headers);
  const principal = token ? await auth.verifyBearer(token) : null;
  if (!principal) throw noBearer();
  bearerCallers.set(request, principal);
}

const noStore = (set: { headers: Record<string, string | number> }) => {
  set.headers["cache-control"] = "no-store";
};

const BEARER = [{ bearer: [] }];

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
const PUBLIC: [] = [];

/** The macros of every /auth route group: body caps, bearer tokens and rate limits. */
function authMacros(deps: AccountsControllerDeps) {
  return (
    new Elysia()
      .use(rateLimitPlugin({ ...deps, verifyBearer: undefined }))
      // bodies over MAX_BODY_BYTES are 413, declared or chunked; too deep or malformed JSON is
      // 422 (cappedBody); a bearer route checks the token before it reads the body
      .macro({
        jsonBody: { parse: ({ request }) => cappedBody(request) },
        bearer: {
          async parse({ request }) {
            await requireBearer(deps.auth, request);
            return cappedBody(request);
          },
          transform: ({ request }) => requireBearer(deps.auth, request),
          resolve: ({ request }) => {
            const principal = bearerCallers.get(request);
            if (!principal) throw noBearer();
            return { principal };
          },
        },
      })
  );
}

const ipOf = (deps: AccountsControllerDeps, request: Request, server: unknown) =>
  clientIp(request, server as AddressSource | null, deps.trustProxy);

/** Sessions: the signing keys, sign-up, login, refresh and logout. */
function sessionRoutes(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(authMacros(deps))
    .get("/.well-known/jwks.json", () => deps.access.jwks(), {
      response: { 200: JwksResponse },
      detail: {
        tags: ["auth"],
        summary: "Public keys that verify access tokens (JWKS)",
        description:
          "With JWT_PRIVATE_KEY (EdDSA or ES256) the public key, with its kid; with an HS256 JWT_SECRET the set is empty (the secret is never published).",
        security: PUBLIC,
      },
    })
    .post(
      "/auth/register",
      async ({ body, set }) => {
        const r = await deps.auth.register(body.email, body.password);
        set.status = 201;
        noStore(set);
        return r;
      },
      {
        ipRateLimit: REGISTRATIONS,
        jsonBody: true,
        body: Credentials(true),
        response: {
          201: RegisteredResponse,
          409: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
        detail: {
          summary: "Create an account (free tier) and its first API key",
          description:
            "Answers the API key once (only its hash is stored) and sends a verification e-mail. 409 email_taken when the address is registered (compared case-insensitively); 422 validation_error naming the field for a malformed address or a password under 10 or over 256 characters. At most 10 attempts per client IP per hour: 429 with Retry-After.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/login",
      async ({ body, set, request, server }) => {
        const pair = await deps.auth.login(body.email, body.password, ipOf(deps, request, server));
        noStore(set);
        return pair;
      },
      {
        jsonBody: true,
        body: Credentials(false),
        response: {
          200: TokenPairResponse,
          401: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
        detail: {
          summary: "Log in: an access token (JWT) and a refresh token",
          description:
            "401 invalid_credentials for a wrong address or password (the same answer, and about the same time, for both). Failures are throttled with growing delays, never locked for everyone: per address and client IP, 5 free failures in a 15-minute window, then a wait of 1 s, 2 s, 4 s... (at most 15 minutes) before that pair's next attempt; per client IP, 20 free failures across all addresses, then the same. An attempt within its wait is 429 rate_limit_exceeded with Retry-After, even with the right password; the same address from another client IP is not slowed down.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/refresh",
      async ({ body, set }) => {
        const pair = await deps.auth.refresh(body.refreshToken);
        noStore(set);
        return pair;
      },
      {
        jsonBody: true,
        body: RefreshBody,
        response: { 200: TokenPairResponse, 401: ErrorBody, 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Exchange a refresh token for a new pair (rotation)",
          description:
            "Each refresh token works once. Presenting one that was already exchanged revokes every token of its login session (family). Unknown, expired or revoked: 401 invalid_token.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/logout",
      async ({ body, set }) => {
        await deps.auth.logout(body.refreshToken);
        set.status = 204;
      },
      {
        jsonBody: true,
        body: RefreshBody,
        response: { 204: t.Void({ description: "Logged out" }), 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "End the login session of a refresh token",
          description:
            "Revokes the refresh token and every token rotated from the same login. Always 204, also for an unknown token.",
          security: PUBLIC,
        },
      },
    );
}

/** E-mail verification and password reset. */
function emailRoutes(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(authMacros(deps))
    .post(
      "/auth/verify-email",
      async ({ body }) => {
        await deps.auth.verifyEmail(body.token);
        return { emailVerified: true as const };
      },
      {
        jsonBody: true,
        body: TokenBody,
        response: { 200: Verified, 400: ErrorBody, 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Confirm the e-mail address with the token from the verification e-mail",
          description: "Tokens are single-use and expire after 24 hours: 400 invalid_token.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/resend-verification",
      async ({ body, set }) => {
        deps.auth.requestVerificationMail(body.email);
        set.status = 202;
        return {
          message: "If the address belongs to an unverified account, a new link was sent.",
        };
      },
      {
        ipRateLimit: RATE_LIMITS.resendVerification,
        jsonBody: true,
        body: EmailBody,
        response: { 202: Accepted, 413: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Send a new verification e-mail",
          description:
            "Answers 202 whether or not the address is registered, in the same time: the address is looked up and the mail sent after the answer. At most 3 per hour per client IP: 429 with Retry-After.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/forgot-password",
      async ({ body, set }) => {
        deps.auth.requestPasswordReset(body.email);
        set.status = 202;
        return { message: "If the address belongs to an account, a reset link was sent." };
      },
      {
        ipRateLimit: RATE_LIMITS.forgotPassword,
        jsonBody: true,
        body: EmailBody,
        response: { 202: Accepted, 413: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Send a password reset e-mail",
          description:
            "Answers 202 whether or not the address is registered, in the same time: the address is looked up and the mail sent after the answer. At most 3 per hour per client IP: 429 with Retry-After.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/reset-password",
      async ({ body }) => {
        await deps.auth.resetPassword(body.token, body.password);
        return { message: "Password changed. Log in again on every device." };
      },
      {
        jsonBody: true,
        body: ResetBody,
        response: { 200: Accepted, 400: ErrorBody, 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Set a new password with the token from the reset e-mail",
          description:
            "Tokens are single-use and expire after 1 hour: 400 invalid_token. Every refresh token of the account is revoked (and access tokens issued before the reset stop working).",
          security: PUBLIC,
        },
      },
    );
}

/** The caller's own account: profile, API key, publishable keys, deletion. */
function ownAccountRoutes(deps: AccountsControllerDeps) {
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

/** /auth/*: sign-up, login, tokens, e-mail verification, password reset, the caller's account. */
export function accountsController(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(sessionRoutes(deps))
    .use(emailRoutes(deps))
    .use(ownAccountRoutes(deps));
}
