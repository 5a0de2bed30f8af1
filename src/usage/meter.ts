import { storageUnavailable } from "../http/errors";
import type { QuotaDecision, QuotaGate } from "../quota/gate";
import type { Bucket } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { UsageRecorder } from "./port";

/**
 * Metering, framework-free: one quota unit consumed per metered call and one usage event
 * recorded with its final status. The REST routes reach it through the `metered` macro
 * (guard/auth-macros.ts, guard/meter.ts); the MCP tools call it directly.
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
  const durable = m.usage.record({
    at: m.at.getTime(),
    accountId: m.principal.accountId,
    keyId: m.principal.keyId ?? "",
    tier: m.principal.tier,
    bucket: m.bucket,
    route: m.route,
    slug: m.slug,
    variant: m.variant,
    format: m.format,
    miss: m.miss,
    status,
    latencyMs: Math.round((performance.now() - m.started) * 100) / 100,
  });
  return durable?.catch(() => {
    throw storageUnavailable(5);
  });
}
