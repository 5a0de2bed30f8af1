import type { Principal } from "../accounts/model";
import { log } from "../platform/log";
import {
  type ConsumeResult,
  type CounterStore,
  DAY_GRACE_SECONDS,
  dailyKey,
  dayEnd,
  utcDay,
} from "./counter-store";
import type { CounterGuard, Guarded } from "./guard";
import { BUCKETS, type Bucket, dailyLimit } from "./limits";
import type { QuotaDecision, QuotaGate } from "./port";

/** The counter store did not answer (error, timeout or open breaker). */
export class CounterStoreUnavailable extends Error {
  constructor() {
    super("counter store unavailable");
  }
}

/** One usage event, as much of it as a counter rebuild needs (see usage/port.ts UsageEvent). */
export interface CountableEvent {
  keyId: string;
  accountId?: string;
  bucket: Bucket;
  /** UTC day, YYYY-MM-DD */
  day: string;
  status: number;
}

/**
 * The outcome rule: every authenticated request to a bucket counts except the ones refused
 * with 429 (never consumed) and server errors (refunded once the error is mapped: http/meter.ts).
 */
export const countsAgainstQuota = (status: number): boolean => status !== 429 && status < 500;

const expiry = (now: Date) => dayEnd(now) + DAY_GRACE_SECONDS;

interface DayInfo {
  /** unix ms of the day's start and end */
  start: number;
  end: number;
  name: string;
  expireAt: number;
}

function dayInfo(now: Date): DayInfo {
  const end = dayEnd(now) * 1000;
  return { start: end - 86_400_000, end, name: utcDay(now), expireAt: expiry(now) };
}

/** Key id a principal's counters are kept under (bearer callers have none: their account). */
const counterId = (p: Principal) => p.keyId ?? `account-${p.accountId}`;

/**
 * Daily quotas per API key, bucket and UTC day over a counter store. Implements the QuotaGate
 * port used by the `metered` macro. Remote stores are guarded (timeout, breaker): when the store
 * does not answer, requests are served without enforcement (fail open).
 */
export class QuotaService implements QuotaGate {
  /** the current UTC day, computed once per day instead of per request */
  private today: DayInfo = dayInfo(new Date());

  constructor(
    readonly store: CounterStore,
    /** null for in-process stores (they cannot time out) */
    private guard: CounterGuard | null = null,
  ) {}

  private async call<T>(op: () => Promise<T>): Promise<Guarded<T>> {
    if (this.guard) return this.guard.run(op);
    try {
      return { ok: true, value: await op() };
    } catch (err) {
      log("error", "counter store call failed", { error: String(err) });
      return { ok: false };
    }
  }

  private day(now: Date): DayInfo {
    const t = now.getTime();
    if (t >= this.today.start && t < this.today.end) return this.today;
    const d = dayInfo(now);
    // keep the cache on the newest day (a request dated yesterday must not move it back)
    if (d.start > this.today.start) this.today = d;
    return d;
  }

  consume(
    principal: Principal,
    bucket: Bucket,
    now = new Date(),
  ): QuotaDecision | Promise<QuotaDecision> {
    const limit = dailyLimit(principal.tier, bucket, principal.limits);
    const day = this.day(now);
    const resetSeconds = Math.max(1, Math.ceil((day.end - now.getTime()) / 1000));
    const key = dailyKey(day.name, counterId(principal), bucket);
    const decide = (r: Guarded<ConsumeResult>): QuotaDecision => {
      if (!r.ok)
        return { allowed: true, limit: null, remaining: null, resetSeconds, counted: false };
      const { allowed, count } = r.value;
      return {
        allowed,
        limit,
        remaining: limit === null ? null : Math.max(0, limit - count),
        resetSeconds,
        counted: allowed,
      };
    };
    // an in-process store answers at once (and cannot time out: no guard)
    if (!this.guard && this.store.consumeNow)
      return decide({ ok: true, value: this.store.consumeNow(key, limit, day.expireAt) });
    return this.call(() => this.store.consume(key, limit, day.expireAt)).then(decide);
  }

  async refund(principal: Principal, bucket: Bucket, now = new Date()): Promise<void> {
    const key = dailyKey(this.day(now).name, counterId(principal), bucket);
    await this.call(() => this.store.release(key));
  }

  /**
   * Today's counts per bucket, summed over `keyIds`. Not fail-open: throws
   * CounterStoreUnavailable when the store does not answer (GET /v1/usage answers 500).
   */
  async counts(keyIds: string[], now = new Date()): Promise<Record<Bucket, number>> {
    const day = utcDay(now);
    const keys = keyIds.flatMap((id) => BUCKETS.map((b) => dailyKey(day, id, b)));
    const r = await this.call(() => this.store.read(keys));
    if (!r.ok) throw new CounterStoreUnavailable();
    const out = Object.fromEntries(BUCKETS.map((b) => [b, 0])) as Record<Bucket, number>;
    r.value.forEach((n, i) => {
      const b = BUCKETS[i % BUCKETS.length] as Bucket;
      out[b] += n;
    });
    return out;
  }

  /**
   * Key regeneration: add today's counts of the revoked keys to the new key, so regenerating a
   * key never resets the day's usage. The old counters stay (a revoked key is refused anyway).
   * Returns false when the store did not answer (the new key then starts the day at 0).
   */
  async carryOver(fromKeyIds: string[], toKeyId: string, now = new Date()): Promise<boolean> {
    if (!fromKeyIds.length) return true;
    const day = utcDay(now);
    const pairs = fromKeyIds.flatMap((from) =>
      BUCKETS.map((b) => ({ from: dailyKey(day, from, b), to: dailyKey(day, toKeyId, b) })),
    );
    const r = await this.call(() => this.store.addFrom(pairs, expiry(now)));
    if (!r.ok) log("warn", "quota carry-over failed; the new key starts the day at 0", { toKeyId });
    return r.ok;
  }

  /**
   * Rebuild today's counters from the usage event log (after the counter store lost its data).
   * Counts today's events by key and bucket with the outcome rule (`countsAgainstQuota`) and
   * raises each counter to at least that count, so a rebuild never lowers a live counter (events
   * are flushed in batches, counters are ahead of them). Events of other days are ignored.
   * `successor` maps a revoked key to the key that carries its usage (key regeneration); by
   * default events count for the key that made them. Throws CounterStoreUnavailable.
   */
  async rebuildFromEvents(
    events: Iterable<CountableEvent>,
    opts: {
      now?: Date;
      successor?: (keyId: string, accountId?: string) => string | Promise<string>;
    } = {},
  ): Promise<{ day: string; events: number; counters: number }> {
    const now = opts.now ?? new Date();
    const day = utcDay(now);
    const tally = new Map<string, number>();
    const keyFor = new Map<string, string>();
    let counted = 0;
    for (const e of events) {
      if (e.day !== day || !countsAgainstQuota(e.status)) continue;
      let target = keyFor.get(e.keyId);
      if (target === undefined) {
        target = opts.successor ? await opts.successor(e.keyId, e.accountId) : e.keyId;
        keyFor.set(e.keyId, target);
      }
      const k = dailyKey(day, target, e.bucket);
      tally.set(k, (tally.get(k) ?? 0) + 1);
      counted++;
    }
    const entries = [...tally].map(([key, value]) => ({ key, value }));
    const r = await this.call(() => this.store.raiseTo(entries, expiry(now)));
    if (!r.ok) throw new CounterStoreUnavailable();
    return { day, events: counted, counters: entries.length };
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
