import type { Principal } from "../accounts/model";
import type { Bucket } from "../quota/limits";
import type { QuotaGate } from "../quota/port";
import type { UsageRecorder } from "../usage/port";

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
  quota: QuotaGate;
  usage: UsageRecorder;
}

const open = new WeakMap<Request, Meter>();

/** Status recorded for a request whose client disconnected before the answer (nginx's 499). */
export const CLIENT_GONE = 499;

/** Called by the `metered` macro once the unit is consumed (or refused: a 429 is settled too). */
export function openMeter(request: Request, meter: Meter): void {
  open.set(request, meter);
}

/**
 * Ends a metered request once its status is known: the usage event is recorded (a buffer push:
 * nothing waits on the event store) and a server error gives its unit back (the outcome rule in
 * docs/quota.md). Called where the status is final: the `metered` macro's afterHandle for a
 * handler's answer, the error plugin for anything thrown. Only the first call for a request
 * counts; requests that were never metered are ignored.
 */
export function settleMeter(request: Request, status: number): void {
  const m = open.get(request);
  if (!m) return;
  open.delete(request);
  // the client went away before its answer was ready (e.g. gave up on a slow render): it gets
  // nothing, so it pays nothing; logged as 499 (client closed request)
  if (request.signal.aborted) status = CLIENT_GONE;
  if ((status >= 500 || status === CLIENT_GONE) && m.counted)
    void m.quota.refund(m.principal, m.bucket, m.at).catch(() => {});
  m.usage.record({
    at: m.at.getTime(),
    accountId: m.principal.accountId,
    keyId: m.principal.keyId ?? "",
    tier: m.principal.tier,
    bucket: m.bucket,
    route: m.route,
    slug: m.slug,
    variant: m.variant,
    status,
    latencyMs: Math.round((performance.now() - m.started) * 100) / 100,
  });
}
