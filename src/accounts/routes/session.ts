import { Elysia, t } from "elysia";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { REGISTRATIONS } from "../auth";
import {
  Credentials,
  JwksResponse,
  RefreshBody,
  RegisteredResponse,
  TokenPairResponse,
} from "../model";
import { type AccountsControllerDeps, authMacros, ipOf, noStore, PUBLIC } from "./auth-base";

/** Sessions: the signing keys, sign-up, login, refresh and logout. */
export function sessionRoutes(deps: AccountsControllerDeps) {
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
