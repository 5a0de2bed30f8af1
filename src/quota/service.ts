import { DAY_MS, utcDay } from "../platform/day";
import { log } from "../platform/log";
import { labelled, quotaDecisions } from "../platform/process-metrics";
import type { CircuitBreaker, Guarded, StoreCondition } from "./circuit-breaker";
import type { CountableEvent, QuotaDecision, QuotaGate } from "./gate";
import { BUCKETS, type Bucket, dailyLimit } from "./limits";
import type { Principal } from "./principal";
import {
  type ConsumeResult,
  type CounterStore,
  DAY_GRACE_SECONDS,
  dailyKey,
  dayEnd,
  seedKey,
} from "./store/port";

/** The counter store did not answer (error, timeout or open breaker). */
export class CounterStoreUnavailable extends Error {
  constructor() {
    super("counter store unavailable");
  }
}

/**
 * The outcome rule: every authenticated request to a bucket counts except the ones refused
 * with 429 (never consumed), server errors (refunded once the error is mapped: usage/meter.ts) and
 * 499, requests whose client went away before the answer (refunded the same way).
 */
export const countsAgainstQuota = (status: number): boolean =>
  status !== 429 && status !== 499 && status < 500;

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
  return { start: end - DAY_MS, end, name: utcDay(now), expireAt: expiry(now) };
}

const decisions = labelled(quotaDecisions);
/** Counts a quota decision (metrics: quota_decisions_total). */
const decided = (bucket: Bucket, outcome: "allowed" | "limited" | "failed_open") =>
  decisions(bucket + outcome, { bucket, outcome }).inc();

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
  private reseeder: (() => Promise<unknown>) | null = null;
  private reseeding: Promise<void> | null = null;
  private reseedAgain = false;
  /**
   * Requests this process served today per counter key (remote stores only), served unenforced
   * during an outage included. Every consume raises the store's counter to at least it, so a
   * store found empty cannot hand a capped key a fresh day, nor count the outage's requests as
   * never served. Cleared when the UTC day changes.
   */
  private tally = new Map<string, number>();
  private tallyDay = "";

  constructor(
    readonly store: CounterStore,
    /** null for in-process stores (they cannot time out) */
    private breaker: CircuitBreaker | null = null,
  ) {
    breaker?.onChange((c) => {
      if (c.state === "ok") this.reseed("counter store back after an outage");
    });
  }

  /** ok, or degraded since when (the breaker is open: quotas fail open). */
  condition(): StoreCondition & { kind: CounterStore["kind"] } {
    return {
      kind: this.store.kind,
      ...(this.breaker?.condition() ?? { state: "ok", since: null }),
    };
  }

  /**
   * How today's counters are seeded again from the usage log (usage/counters.ts
   * rebuildCounters, after a flush of the recorder). Run when a remote store comes back after an
   * outage (the requests served unenforced meanwhile count), and when a consume finds the day's
   * seed mark missing (the store restarted empty). One run at a time; a request while one runs
   * runs it once more afterwards.
   */
  setReseeder(fn: () => Promise<unknown>): void {
    this.reseeder = fn;
  }

  /** Re-seed the counters now (see setReseeder); resolves when done, never rejects. */
  reseed(reason: string): Promise<void> {
    if (!this.reseeder) return Promise.resolve();
    if (this.reseeding) {
      this.reseedAgain = true;
      return this.reseeding;
    }
    const run = async () => {
      do {
        this.reseedAgain = false;
        const started = performance.now();
        try {
          const r = await this.reseeder?.();
          log("info", "quota counters re-seeded from the usage log", {
            reason,
            ms: Math.round(performance.now() - started),
            ...(r && typeof r === "object" ? r : {}),
          });
        } catch (err) {
          log("warn", "quota counter re-seed failed; retried when the store is back", {
            reason,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      } while (this.reseedAgain);
    };
    this.reseeding = run().finally(() => {
      this.reseeding = null;
    });
    return this.reseeding;
  }

  private async call<T>(op: () => Promise<T>): Promise<Guarded<T>> {
    if (this.breaker) return this.breaker.run(op);
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
    // an in-process store answers at once (and cannot time out: no guard, nothing to re-seed)
    if (!this.breaker && this.store.consumeNow) {
      const { allowed, count } = this.store.consumeNow(key, limit, day.expireAt);
      decided(bucket, allowed ? "allowed" : "limited");
      const remaining = limit === null ? null : Math.max(0, limit - count);
      return { allowed, limit, remaining, resetSeconds, counted: allowed };
    }
    const tally = this.tallyOf(day.name);
    const decide = (r: Guarded<ConsumeResult>): QuotaDecision => {
      // requests this process served earlier today on the counter
      const before = tally?.get(key) ?? 0;
      if (!r.ok) {
        // served unenforced (fail open); still a request of the day for the tally
        tally?.set(key, before + 1);
        decided(bucket, "failed_open");
        return { allowed: true, limit: null, remaining: null, resetSeconds, counted: false };
      }
      const { allowed, count, seeded } = r.value;
      if (seeded === false && !this.reseeding) this.reseed("counter store has no seeded counters");
      if (allowed) tally?.set(key, before + 1);
      decided(bucket, allowed ? "allowed" : "limited");
      return {
        allowed,
        limit,
        remaining: limit === null ? null : Math.max(0, limit - count),
        resetSeconds,
        counted: allowed,
      };
    };
    // a remote store also tells whether the day's counters were seeded (it may restart empty);
    // the tally is sent as the counter's floor, so a store that lost the day's counters counts
    // on from what this process served, in the same atomic step, even before the re-seed
    const opts = {
      seedKey: this.reseeder ? seedKey(day.name) : undefined,
      floor: tally?.get(key) ?? 0,
    };
    return this.call(() => this.store.consume(key, limit, day.expireAt, opts)).then(decide);
  }

  /** The tally of `day` (null for a past day: nothing is kept for it). */
  private tallyOf(day: string): Map<string, number> | null {
    if (day === this.tallyDay) return this.tally;
    if (day < this.tallyDay) return null;
    this.tally.clear();
    this.tallyDay = day;
    return this.tally;
  }

  async refund(principal: Principal, bucket: Bucket, now = new Date()): Promise<void> {
    const day = this.day(now).name;
    const key = dailyKey(day, counterId(principal), bucket);
    const n = this.tally.get(key);
    if (n !== undefined && day === this.tallyDay) this.tally.set(key, Math.max(0, n - 1));
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
    events: Iterable<CountableEvent> | AsyncIterable<CountableEvent>,
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
    for await (const e of events) {
      if (e.day !== day || !countsAgainstQuota(e.status)) continue;
      let target = keyFor.get(e.keyId);
      if (target === undefined) {
        target = opts.successor ? await opts.successor(e.keyId, e.accountId) : e.keyId;
        keyFor.set(e.keyId, target);
      }
      const k = dailyKey(day, target, e.bucket);
      const n = e.events ?? 1;
      tally.set(k, (tally.get(k) ?? 0) + n);
      counted += n;
    }
    const entries = [...tally].map(([key, value]) => ({ key, value }));
    // the day's seed mark goes with the counters: a store that loses them loses it too
    entries.push({ key: seedKey(day), value: 1 });
    const r = await this.call(() => this.store.raiseTo(entries, expiry(now)));
    if (!r.ok) throw new CounterStoreUnavailable();
    return { day, events: counted, counters: tally.size };
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
