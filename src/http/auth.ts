import { Elysia } from "elysia";
import type { Principal } from "../accounts/model";
import type { AccountService } from "../accounts/service";
import type { Bucket } from "../quota/limits";
import type { QuotaDecision, QuotaGate } from "../quota/port";
import type { UsageRecorder } from "../usage/port";
import { ApiError, invalidApiKey } from "./errors";

export interface AuthDeps {
  accounts: AccountService;
  quota: QuotaGate;
  usage: UsageRecorder;
  upgradeUrl: string;
  /** verifies an Authorization: Bearer token (accounts issue); absent = bearer not accepted */
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

type HeaderBag = Record<string, string | undefined>;

/** The caller, from X-API-Key or (where the route allows it) a bearer token; else 401. */
export async function authenticate(
  deps: AuthDeps,
  headers: HeaderBag,
  allowBearer: boolean,
): Promise<Principal> {
  const key = headers["x-api-key"];
  if (key) {
    const p = await deps.accounts.verifyKey(key.trim());
    if (p) return p;
    throw invalidApiKey();
  }
  const auth = headers.authorization;
  if (allowBearer && deps.verifyBearer && auth?.toLowerCase().startsWith("bearer ")) {
    const p = await deps.verifyBearer(auth.slice(7).trim());
    if (p) return p;
  }
  throw invalidApiKey();
}

export function rateLimitHeaders(d: QuotaDecision): Record<string, string> {
  const h: Record<string, string> = { "x-ratelimit-reset": String(d.resetSeconds) };
  if (d.limit !== null) {
    h["x-ratelimit-limit"] = String(d.limit);
    h["x-ratelimit-remaining"] = String(Math.max(0, d.remaining ?? 0));
  }
  return h;
}

export function rateLimited(
  message: string,
  retryAfter: number,
  upgradeUrl: string,
  headers: Record<string, string> = {},
): ApiError {
  return new ApiError(
    429,
    "rate_limit_exceeded",
    message,
    { reset_in_seconds: retryAfter, upgrade_url: upgradeUrl },
    { "retry-after": String(retryAfter), ...headers },
  );
}

const TIER_LABEL = (p: Principal) => `${p.tier} tier`;

/** The authenticated caller of each in-flight request (set in transform, read in resolve). */
const callers = new WeakMap<Request, Principal>();
function callerOf(request: Request): Principal {
  const p = callers.get(request);
  if (!p) throw invalidApiKey();
  return p;
}

/**
 * Route macros:
 *  - `apiKey: true`            X-API-Key required; resolves `principal`.
 *  - `keyOrBearer: true`       X-API-Key or Authorization: Bearer; resolves `principal`.
 *  - `metered: "<bucket>"`     X-API-Key required, the bucket's daily quota is consumed
 *                               (429 when exhausted), rate-limit headers are set, a usage event
 *                               is recorded after the response, and a server error refunds.
 */
export function authPlugin(deps: AuthDeps) {
  return new Elysia().macro({
    // Credentials are checked in `transform`, which runs before schema validation, so an
    // unauthenticated request is always 401, never a 422 that reveals the route's rules.
    apiKey: {
      async transform({ request, headers }) {
        callers.set(request, await authenticate(deps, headers, false));
      },
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    keyOrBearer: {
      async transform({ request, headers }) {
        callers.set(request, await authenticate(deps, headers, true));
      },
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    metered: (bucket: Bucket) => ({
      async transform({ request, headers }) {
        callers.set(request, await authenticate(deps, headers, false));
      },
      async resolve({ request, set }) {
        const started = performance.now();
        const principal = callerOf(request);
        const decision = await deps.quota.consume(principal, bucket);
        if (!decision.allowed)
          throw rateLimited(
            `Daily limit of ${decision.limit} ${bucket} requests reached for the ${TIER_LABEL(principal)}. ` +
              `It resets at 00:00 UTC; upgrade for higher limits.`,
            decision.resetSeconds,
            deps.upgradeUrl,
            rateLimitHeaders(decision),
          );
        Object.assign(set.headers, rateLimitHeaders(decision));
        return { principal, meter: { bucket, started } };
      },
      afterResponse(ctx) {
        const { set, params, query, route } = ctx;
        const c = ctx as unknown as {
          principal?: Principal;
          meter?: { bucket: Bucket; started: number };
        };
        if (!c.principal || !c.meter) return;
        const status = typeof set.status === "number" ? set.status : 200;
        if (status >= 500) void deps.quota.refund(c.principal, c.meter.bucket).catch(() => {});
        const p = params as Record<string, string> | undefined;
        const q = query as Record<string, unknown> | undefined;
        deps.usage.record({
          ts: new Date().toISOString(),
          accountId: c.principal.accountId,
          keyId: c.principal.keyId ?? "",
          tier: c.principal.tier,
          bucket: c.meter.bucket,
          route,
          slug: p?.slug ?? null,
          variant: typeof q?.variant === "string" ? q.variant : null,
          status,
          latencyMs: Math.round((performance.now() - c.meter.started) * 100) / 100,
        });
      },
    }),
  });
}
