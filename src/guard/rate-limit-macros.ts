import { Elysia } from "elysia";
import type { AccountService } from "../accounts/service";
import { type AddressSource, clientIp } from "../http/client-ip";
import { ApiError, invalidApiKey, windowLimited } from "../http/errors";
import type { RatePolicy } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { RateLimiter } from "../quota/rate-limit";
import { callerOf, rememberCaller } from "./auth-macros";
import { authenticate } from "./credentials";

export interface RateLimitDeps {
  accounts: AccountService;
  limiter: RateLimiter;
  upgradeUrl: string;
  /** honour X-Forwarded-For (TRUST_PROXY) */
  trustProxy: boolean;
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

async function enforce(deps: RateLimitDeps, policy: RatePolicy, identity: string): Promise<void> {
  const d = await deps.limiter.hit(policy, identity);
  if (!d.allowed) throw windowLimited(policy, d.retryAfter, deps.upgradeUrl);
}

/**
 * Short-window caps (quota/limits.ts RATE_LIMITS) as route macros; 429 rate_limit_exceeded with
 * Retry-After when exceeded:
 *  - `accountRateLimit: RATE_LIMITS.usage`  X-API-Key or Bearer required (resolves `principal`,
 *     like `keyOrBearer`); counted per account, and per client IP for callers without valid
 *     credentials (they get 401 until the cap, then 429).
 *  - `ipRateLimit: RATE_LIMITS.forgotPassword`  counted per client IP (resolves `clientIp`),
 *     no credentials needed.
 */
export function rateLimitPlugin(deps: RateLimitDeps) {
  const authDeps = { accounts: deps.accounts, verifyBearer: deps.verifyBearer };
  const ipOf = (request: Request, server: unknown) =>
    clientIp(request, server as AddressSource | null, deps.trustProxy);
  return new Elysia().macro({
    // Both run in transform (before schema validation), like the auth macros: every attempt
    // counts, malformed ones included.
    accountRateLimit: (policy: RatePolicy) => ({
      async transform({ request, server }) {
        let principal: Principal | null = null;
        try {
          principal = await authenticate(authDeps, request.headers, "token");
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
        }
        const identity = principal
          ? `account:${principal.accountId}`
          : `ip:${ipOf(request, server)}`;
        await enforce(deps, policy, identity);
        if (!principal) throw invalidApiKey();
        rememberCaller(request, principal);
      },
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    }),
    ipRateLimit: (policy: RatePolicy) => ({
      async transform({ request, server }) {
        await enforce(deps, policy, `ip:${ipOf(request, server)}`);
      },
      resolve: ({ request, server }) => ({ clientIp: ipOf(request, server) }),
    }),
  });
}
