import { Elysia } from "elysia";
import type { AccountService } from "../accounts/service";
import { cappedBody } from "../http/body-limits";
import { invalidApiKey, rateLimited } from "../http/errors";
import type { QuotaDecision, QuotaGate } from "../quota/gate";
import type { Bucket } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { UsageRecorder } from "../usage/log/recorder";
import {
  dailyLimitMessage,
  type MeterTarget,
  openMeter,
  settleHook,
  startMeter,
} from "../usage/meter";
import { apiKeyOf, authenticate, type BearerPolicy } from "./credentials";

export interface AuthDeps {
  accounts: AccountService;
  quota: QuotaGate;
  usage: UsageRecorder;
  upgradeUrl: string;
  /** verifies an Authorization: Bearer token (accounts issue); absent = bearer not accepted */
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

/** X-RateLimit-* of a decision, written into `into` (a response's headers) or a new object. */
export function rateLimitHeaders(
  d: QuotaDecision,
  into: Record<string, string | number> = {},
): Record<string, string> {
  into["x-ratelimit-reset"] = String(d.resetSeconds);
  if (d.limit !== null) {
    into["x-ratelimit-limit"] = String(d.limit);
    into["x-ratelimit-remaining"] = String(Math.max(0, d.remaining ?? 0));
  }
  return into as Record<string, string>;
}

/** The caller of a key checked within the last few seconds: no promise on the hot path. */
function knownCaller(deps: Pick<AuthDeps, "accounts">, headers: Headers): Principal | undefined {
  const key = apiKeyOf(headers);
  return key ? deps.accounts.cachedKey(key) : undefined;
}

/**
 * The authenticated caller of each in-flight request: set while the body is parsed (routes with
 * a body) or in transform, read in resolve.
 */
const callers = new WeakMap<Request, Principal>();

/** Remembers the caller a macro authenticated for `request` (read by `callerOf`). */
export function rememberCaller(request: Request, principal: Principal): void {
  callers.set(request, principal);
}

/** Authenticates `request` (a cached key needs no store call) and remembers its caller. */
async function identify(deps: AuthDeps, request: Request, bearer: BearerPolicy): Promise<void> {
  if (callers.has(request)) return; // already done while the body was parsed
  const { headers } = request;
  callers.set(request, knownCaller(deps, headers) ?? (await authenticate(deps, headers, bearer)));
}

/**
 * Runs while the body is parsed, before the parser reads it (routes with a body only): the
 * caller is authenticated first, so malformed JSON without credentials is 401, not 422, and an
 * unauthenticated body is never read; a declared body over MAX_BODY_BYTES is 413, and so is a
 * chunked one (no Content-Length) once MAX_BODY_BYTES of it have arrived (it is read here, with
 * that cap, and handed to the route as its parsed body).
 */
async function identifyBeforeBody(
  deps: AuthDeps,
  request: Request,
  bearer: BearerPolicy,
): Promise<unknown> {
  await identify(deps, request, bearer);
  return cappedBody(request);
}

/** The `parse` and `transform` hooks that authenticate a route's caller (see authPlugin). */
const credentialHooks = (deps: AuthDeps, bearer: BearerPolicy) => ({
  parse: ({ request }: { request: Request }) => identifyBeforeBody(deps, request, bearer),
  async transform({ request }: { request: Request }) {
    await identify(deps, request, bearer);
  },
});

/** The caller a macro authenticated for `request`; 401 when none was. */
export function callerOf(request: Request): Principal {
  const p = callers.get(request);
  if (!p) throw invalidApiKey();
  return p;
}

/**
 * One unit of `bucket` for the request (the `metered` macro's step, also taken by routes that
 * authenticate in their own way, such as /i/ URLs): 429 when refused, X-RateLimit-* headers on
 * `set`. The meter is settled with the final status by the route's afterHandle (settleMeter) or
 * the error plugin. Synchronous when the counter store is in this process.
 */
export function charge(
  deps: Pick<AuthDeps, "quota" | "usage" | "upgradeUrl">,
  request: Request,
  set: { headers: Record<string, string | number> },
  principal: Principal,
  bucket: Bucket,
  target: MeterTarget,
  started = performance.now(),
): undefined | Promise<void> {
  const pending = startMeter(deps, principal, bucket, target, started);
  const settle = ({ decision, meter }: Awaited<typeof pending>) => {
    // settled with the final status by afterHandle or the error plugin (429s included)
    openMeter(request, meter);
    if (!decision.allowed)
      throw rateLimited(
        dailyLimitMessage(decision.limit, bucket, principal),
        decision.resetSeconds,
        deps.upgradeUrl,
        rateLimitHeaders(decision),
      );
    rateLimitHeaders(decision, set.headers);
  };
  if (pending instanceof Promise) return pending.then(settle);
  settle(pending);
}

/**
 * Route macros:
 *  - `apiKey: true`            X-API-Key required; resolves `principal`.
 *  - `keyOrBearer: true`       X-API-Key or Authorization: Bearer; resolves `principal`.
 *  - `metered: "<bucket>"`     X-API-Key required, the bucket's daily quota is consumed
 *                               (429 when exhausted), rate-limit headers are set, and once the
 *                               status is final a usage event is recorded and a server error
 *                               refunds (http/meter.ts; errors are settled by the error plugin).
 */
/** buckets whose routes serve an image of that format (the usage event's `format`) */
const IMAGE_BUCKETS = new Set<Bucket>(["svg", "png", "webp"]);

export function authPlugin(deps: AuthDeps) {
  return new Elysia().macro({
    // Credentials are checked in `parse` (routes with a body, before it is read) and in
    // `transform` (before schema validation), so an unauthenticated request is always 401,
    // never a 422 that reveals the route's rules.
    apiKey: {
      ...credentialHooks(deps, "none"),
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    keyOrBearer: {
      ...credentialHooks(deps, "token"),
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    metered: (bucket: Bucket) => ({
      ...credentialHooks(deps, "none"),
      // Hooks destructure their context (no whole-`ctx` use): Elysia then compiles only what
      // they read (e.g. no cookie parsing) on every metered route.
      async resolve({ request, set, params, query, route }) {
        const started = performance.now();
        const principal = callerOf(request);
        const p = params as Record<string, string> | undefined;
        const q = query as Record<string, unknown> | undefined;
        const target = {
          route,
          slug: p?.slug ?? null,
          variant: typeof q?.variant === "string" ? q.variant : null,
          format: IMAGE_BUCKETS.has(bucket) ? bucket : undefined,
        };
        const charged = charge(deps, request, set, principal, bucket, target, started);
        // an in-process counter store decides synchronously: no promise on the hot path
        if (charged) await charged;
        return { principal };
      },
      // The handler answered (its status is final): record now, synchronously, so the event is
      // buffered before the client has its response (Elysia's afterResponse runs later).
      // USAGE_DURABILITY=strict: the answer waits until the event is durable.
      afterHandle: settleHook(deps.usage),
    }),
  });
}
