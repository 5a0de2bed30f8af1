import type { ConsumeOptions, ConsumeResult, CounterStore } from "./port";

interface Entry {
  count: number;
  /** unix ms */
  expires: number;
}

/**
 * Counters in this process's memory: exact for a single instance, lost on restart (rebuild them
 * from the usage event log). Expired entries read as 0 and are swept once a minute.
 */
export class MemoryCounterStore implements CounterStore {
  readonly kind = "memory" as const;
  readonly remote = false;
  private map = new Map<string, Entry>();
  private nextSweep = 0;

  constructor(private now: () => number = Date.now) {}

  private live(key: string, t: number): Entry | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    if (e.expires <= t) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  private sweep(t: number) {
    if (t < this.nextSweep) return;
    this.nextSweep = t + 60_000;
    for (const [k, e] of this.map) if (e.expires <= t) this.map.delete(k);
  }

  private write(key: string, count: number, expireAt: number) {
    this.map.set(key, { count, expires: expireAt * 1000 });
  }

  async consume(
    key: string,
    limit: number | null,
    expireAt: number,
    opts?: ConsumeOptions,
  ): Promise<ConsumeResult> {
    return this.consumeNow(key, limit, expireAt, opts);
  }

  consumeNow(
    key: string,
    limit: number | null,
    expireAt: number,
    opts?: ConsumeOptions,
  ): ConsumeResult {
    const t = this.now();
    this.sweep(t);
    const found = this.live(key, t);
    const e = found ?? { count: 0, expires: 0 };
    const before = e.count;
    e.count = Math.max(before, opts?.floor ?? 0);
    const allowed = limit === null || e.count < limit;
    if (allowed) e.count += 1;
    if (e.count !== before) {
      e.expires = expireAt * 1000;
      if (!found) this.map.set(key, e);
    }
    const r: ConsumeResult = { allowed, count: e.count };
    if (opts?.seedKey !== undefined) r.seeded = this.live(opts.seedKey, t) !== undefined;
    return r;
  }

  async release(key: string): Promise<void> {
    const e = this.live(key, this.now());
    if (e && e.count > 0) e.count -= 1;
  }

  async read(keys: string[]): Promise<number[]> {
    const t = this.now();
    return keys.map((k) => this.live(k, t)?.count ?? 0);
  }

  async addFrom(pairs: { from: string; to: string }[], expireAt: number): Promise<void> {
    const t = this.now();
    const values = pairs.map((p) => this.live(p.from, t)?.count ?? 0);
    pairs.forEach((p, i) => {
      const n = values[i] ?? 0;
      if (n > 0) this.write(p.to, (this.live(p.to, t)?.count ?? 0) + n, expireAt);
    });
  }

  async raiseTo(entries: { key: string; value: number }[], expireAt: number): Promise<void> {
    const t = this.now();
    for (const { key, value } of entries)
      this.write(key, Math.max(value, this.live(key, t)?.count ?? 0), expireAt);
  }

  async close(): Promise<void> {
    this.map.clear();
  }
}
