import { storageUnavailable } from "../http/errors";
import { whenFinal } from "../http/final-status";
import type { QuotaDecision, QuotaGate } from "../quota/gate";
import type { Bucket } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { UsageRecorder } from "./log/recorder";

/**
 * Metering, in one place: one quota unit consumed per metered call and one usage event recorded
 * with its final status. The REST routes reach it through the `metered` macro
 * (guard/auth-macros.ts: `openMeter`, `settleHook`, `noteMeter` below, keyed by the Request);
 * the MCP tools call `startMeter` and `closeMeter` directly.
 */

/** A metered request whose quota unit is taken and whose outcome is not known yet. */
export interface Meter {
  principal: Principal;
  bucket: Bucket;
  /** performance.now() at the quota check */
  started: number;
  /** when the unit was consumed (the event's ts; a refund goes to the same UTC day) */
  at: Date;
  /** false when the counter store did not answer: nothing to refund */
  counted: boolean;
  route: string;
  slug: string | null;
  variant: string | null;
  /** the image format served (asset routes), else undefined */
  format?: string;
  /** what was asked for and could not be served (see UsageEvent.miss) */
  miss?: string[];
  quota: QuotaGate;
  usage: UsageRecorder;
}

/** Status recorded for a request whose client disconnected before the answer (nginx's 499). */
export const CLIENT_GONE = 499;

/** What a metered call is about, as its usage event names it. */
export interface MeterTarget {
  route: string;
  slug: string | null;
  variant: string | null;
  format?: string;
}

/**
 * Framework-free metering (the `metered` macro's steps, for callers that are not Elysia routes,
 * such as the MCP tools): one unit of `bucket` is consumed through the QuotaGate (synchronously
 * when the counter store is in this process). The caller settles the returned meter with
 * `closeMeter` once the outcome is known, a refusal (429) included.
 */
export function startMeter(
  deps: { quota: QuotaGate; usage: UsageRecorder },
  principal: Principal,
  bucket: Bucket,
  target: MeterTarget,
  started = performance.now(),
): Opened | Promise<Opened> {
  // USAGE_ON_STORE_FULL=refuse and the usage events cannot be kept: served, none would be
  if (deps.usage.accepting && !deps.usage.accepting()) throw storageUnavailable(5);
  const at = new Date();
  const pending = deps.quota.consume(principal, bucket, at);
  // no closure on the synchronous (in-process counter store) path
  if (pending instanceof Promise)
    return pending.then((d) => opened(deps, principal, bucket, target, started, at, d));
  return opened(deps, principal, bucket, target, started, at, pending);
}

interface Opened {
  decision: QuotaDecision;
  meter: Meter;
}

function opened(
  deps: { quota: QuotaGate; usage: UsageRecorder },
  principal: Principal,
  bucket: Bucket,
  target: MeterTarget,
  started: number,
  at: Date,
  decision: QuotaDecision,
): Opened {
  return {
    decision,
    meter: {
      principal,
      bucket,
      started,
      at,
      counted: decision.counted !== false,
      route: target.route,
      slug: target.slug,
      variant: target.variant,
      format: target.format,
      quota: deps.quota,
      usage: deps.usage,
    },
  };
}

/** The message of a refused metered request (429 rate_limit_exceeded). */
export const dailyLimitMessage = (limit: number | null, bucket: Bucket, principal: Principal) =>
  `Daily limit of ${limit} ${bucket} requests reached for the ${principal.tier} tier. ` +
  `It resets at 00:00 UTC; upgrade for higher limits.`;

/**
 * Ends a metered call with its final status: the usage event is recorded and a server error
 * gives its unit back (see settleMeter). Call it once per meter. With USAGE_DURABILITY=strict
 * it returns a promise that resolves once the event is durable: the caller answers after it (it
 * rejects with 503 storage_unavailable when the event could not be kept).
 */
export function closeMeter(m: Meter, status: number): undefined | Promise<void> {
  if ((status >= 500 || status === CLIENT_GONE) && m.counted)
    void m.quota.refund(m.principal, m.bucket, m.at).catch(() => {});
  // the event: the meter itself is the record's input (no object made per event)
  const durable = m.usage.record(m, status, Math.round((performance.now() - m.started) * 1000));
  return durable?.catch(() => {
    throw storageUnavailable(5);
  });
}

/**
 * The meters of in-flight requests: opened by the `metered` macro, noted by handlers, settled
 * once the status is final. The metering itself is framework-free (usage/meter.ts).
 */
const open = new WeakMap<Request, Meter>();

/** Called by the `metered` macro once the unit is consumed (or refused: a 429 is settled too). */
export function openMeter(request: Request, meter: Meter): void {
  open.set(request, meter);
  // anything thrown ends at the error plugin, which settles the meter through this hook
  whenFinal(request, (status) => settleMeter(request, status));
}

/**
 * Ends a metered request once its status is known: the usage event is recorded (a buffer push:
 * nothing waits on the event store) and a server error gives its unit back (the outcome rule in
 * docs/quota.md). Called where the status is final: the `metered` macro's afterHandle for a
 * handler's answer, the error plugin for anything thrown. Only the first call for a request
 * counts; requests that were never metered are ignored. With USAGE_DURABILITY=strict it returns
 * a promise to await before answering (see closeMeter).
 */
function settleMeter(request: Request, status: number): undefined | Promise<void> {
  const m = open.get(request);
  if (!m) return;
  open.delete(request);
  // the client went away before its answer was ready (e.g. gave up on a slow render): it gets
  // nothing, so it pays nothing; logged as 499 (client closed request)
  if (request.signal.aborted) status = CLIENT_GONE;
  return closeMeter(m, status);
}

type HookContext = { request: Request; set: { status?: unknown } };

/** afterHandle of a metered route: the usage event is recorded, nothing waits */
function settleNow({ request, set }: HookContext) {
  settleMeter(request, typeof set.status === "number" ? set.status : 200);
}

/** afterHandle with USAGE_DURABILITY=strict: returns (Elysia awaits) until the event is durable */
function settleDurably({ request, set }: HookContext) {
  return settleMeter(request, typeof set.status === "number" ? set.status : 200);
}

/**
 * The afterHandle hook that settles a metered route's meter with the handler's status. Elysia
 * awaits a hook that returns a call, so the strict one is chosen only when the recorder is
 * strict: batched routes stay synchronous.
 */
export const settleHook = (usage: UsageRecorder) => (usage.strict ? settleDurably : settleNow);

/**
 * What a handler learns about its request that the usage event should name: the brand it
 * resolved (`slug`), or what it could not serve (`miss`, e.g. `domain:acme.test`). No-op for a
 * request that is not metered.
 */
export function noteMeter(request: Request, note: { slug?: string; miss?: string[] }): void {
  const m = open.get(request);
  if (!m) return;
  if (note.slug !== undefined) m.slug = note.slug;
  if (note.miss !== undefined) m.miss = note.miss;
}
