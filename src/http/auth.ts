import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Principal } from "../accounts/model";
import type { AccountService } from "../accounts/service";
import type { Bucket, RatePolicy } from "../quota/limits";
import type { QuotaDecision, QuotaGate } from "../quota/port";
import type { RateLimiter } from "../quota/rate-limit";
import type { UsageRecorder } from "../usage/port";
import { type AddressSource, clientIp } from "./client-ip";
import { ApiError, invalidApiKey } from "./errors";
import { isJson, parseJsonBody } from "./json-body";
import { dailyLimitMessage, type MeterTarget, openMeter, settleHook, startMeter } from "./meter";

export interface AuthDeps {
  accounts: AccountService;
  quota: QuotaGate;
  usage: UsageRecorder;
  upgradeUrl: string;
  /** verifies an Authorization: Bearer token (accounts issue); absent = bearer not accepted */
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

/**
 * The caller, from X-API-Key or (where the route allows it) a bearer token; else 401.
 * Takes the request's Headers (not Elysia's `headers` object: a hook that reads `headers`
 * makes Elysia copy every header of every request on the route).
 */
export async function authenticate(
  deps: Pick<AuthDeps, "accounts" | "verifyBearer">,
  headers: Headers,
  allowBearer: boolean,
): Promise<Principal> {
  const key = headers.get("x-api-key");
  if (key) {
    const p = await deps.accounts.verifyKey(key.trim());
    if (p) return p;
    throw invalidApiKey();
  }
  const auth = headers.get("authorization");
  if (allowBearer && deps.verifyBearer && auth?.toLowerCase().startsWith("bearer ")) {
    const p = await deps.verifyBearer(auth.slice(7).trim());
    if (p) return p;
  }
  throw invalidApiKey();
}

/**
 * Whether the request carries `Authorization: Bearer <expected>` (an operator secret such as
 * ADMIN_TOKEN or METRICS_TOKEN). Compared in constant time over SHA-256 digests, so neither the
 * token nor its length leaks through timing.
 */
export function hasBearerToken(request: Request, expected: string): boolean {
  const auth = request.headers.get("authorization") ?? "";
  const token = auth.toLowerCase().startsWith("bearer ") ? auth.slice(7).trim() : "";
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return token !== "" && timingSafeEqual(digest(token), digest(expected));
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

/** The caller of a key checked within the last few seconds: no promise on the hot path. */
function knownCaller(deps: Pick<AuthDeps, "accounts">, headers: Headers): Principal | undefined {
  const key = headers.get("x-api-key");
  return key ? deps.accounts.cachedKey(key.trim()) : undefined;
}

/**
 * The authenticated caller of each in-flight request: set while the body is parsed (routes with
 * a body) or in transform, read in resolve.
 */
const callers = new WeakMap<Request, Principal>();

/** Authenticates `request` (a cached key needs no store call) and remembers its caller. */
async function identify(deps: AuthDeps, request: Request, allowBearer: boolean): Promise<void> {
  if (callers.has(request)) return; // already done while the body was parsed
  const { headers } = request;
  callers.set(
    request,
    knownCaller(deps, headers) ?? (await authenticate(deps, headers, allowBearer)),
  );
}

/** Largest request body an authenticated JSON route reads (a 50-slug batch is under 11 KiB). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The runtime's own cap on a request body (Bun.serve maxRequestBodySize, src/main.ts). Past it
 * the runtime answers 413 with an empty body; below it the routes answer their JSON 413.
 */
export const RUNTIME_BODY_LIMIT = 8 * 1024 * 1024;

const tooLarge = () =>
  new ApiError(
    413,
    "payload_too_large",
    `Request body over ${MAX_BODY_BYTES} bytes; this route takes a small JSON object.`,
  );

/** A body sent without Content-Length (chunked), read up to MAX_BODY_BYTES, as JSON. */
async function readChunkedJson(body: ReadableStream<Uint8Array>): Promise<unknown> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return parseJsonBody(new TextDecoder().decode(Buffer.concat(chunks)));
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
  allowBearer: boolean,
): Promise<unknown> {
  await identify(deps, request, allowBearer);
  return cappedBody(request);
}

/**
 * A parse hook's body reader for small JSON routes: a declared body over MAX_BODY_BYTES is 413;
 * a chunked one (no Content-Length) is read here up to that cap (413 past it). A JSON body is
 * returned parsed, refused with 422 when it nests deeper than MAX_JSON_DEPTH (before any schema
 * sees it) or is malformed; other content types are left to the route's parser (undefined).
 */
export function cappedBody(request: Request): Promise<unknown> | undefined {
  const declared = request.headers.get("content-length");
  if (Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  if (!request.body) return undefined;
  if (declared === null) return readChunkedJson(request.body);
  if (isJson(request)) return request.text().then(parseJsonBody);
}

/** The `parse` and `transform` hooks that authenticate a route's caller (see authPlugin). */
const credentialHooks = (deps: AuthDeps, allowBearer: boolean) => ({
  parse: ({ request }: { request: Request }) => identifyBeforeBody(deps, request, allowBearer),
  async transform({ request }: { request: Request }) {
    await identify(deps, request, allowBearer);
  },
});

function callerOf(request: Request): Principal {
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
      ...credentialHooks(deps, false),
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    keyOrBearer: {
      ...credentialHooks(deps, true),
      resolve: ({ request }) => ({ principal: callerOf(request) }),
    },
    metered: (bucket: Bucket) => ({
      ...credentialHooks(deps, false),
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

export interface RateLimitDeps {
  accounts: AccountService;
  limiter: RateLimiter;
  upgradeUrl: string;
  /** honour X-Forwarded-For (TRUST_PROXY) */
  trustProxy: boolean;
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

function windowName(seconds: number): string {
  if (seconds === 60) return "minute";
  if (seconds === 3600) return "hour";
  return `${seconds} seconds`;
}

async function enforce(deps: RateLimitDeps, policy: RatePolicy, identity: string): Promise<void> {
  const d = await deps.limiter.hit(policy, identity);
  if (!d.allowed)
    throw rateLimited(
      `Rate limit of ${policy.limit} requests per ${windowName(policy.windowSeconds)} reached for ` +
        `${policy.label}. Retry in ${d.retryAfter} seconds.`,
      d.retryAfter,
      deps.upgradeUrl,
    );
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
          principal = await authenticate(authDeps, request.headers, true);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
        }
        const identity = principal
          ? `account:${principal.accountId}`
          : `ip:${ipOf(request, server)}`;
        await enforce(deps, policy, identity);
        if (!principal) throw invalidApiKey();
        callers.set(request, principal);
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
