import { Elysia } from "elysia";
import { bearerOf, rateLimitPlugin } from "../../guard";
import { cappedBody } from "../../http/body-limits";
import { type AddressSource, clientIp } from "../../http/client-ip";
import { unauthenticated } from "../../platform/domain-errors";
import type { Principal } from "../../quota/principal";
import type { RateLimiter } from "../../quota/rate-limit";
import type { AuthService } from "../auth";
import type { AccessTokens } from "../jwt";
import type { AccountService } from "../service";

/**
 * What every /auth route group shares: its dependencies, the bearer-token check (once per
 * request, before the body is read), the body caps and rate-limit macros, the OpenAPI security
 * marks.
 */
export interface AccountsControllerDeps {
  auth: AuthService;
  access: AccessTokens;
  accounts: AccountService;
  limiter: RateLimiter;
  upgradeUrl: string;
  trustProxy: boolean;
}

export const noBearer = () =>
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

export const noStore = (set: { headers: Record<string, string | number> }) => {
  set.headers["cache-control"] = "no-store";
};

export const BEARER = [{ bearer: [] }];

export const PUBLIC: [] = [];

/** The macros of every /auth route group: body caps, bearer tokens and rate limits. */
export function authMacros(deps: AccountsControllerDeps) {
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

export const ipOf = (deps: AccountsControllerDeps, request: Request, server: unknown) =>
  clientIp(request, server as AddressSource | null, deps.trustProxy);
