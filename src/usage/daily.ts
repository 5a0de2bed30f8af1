import { BUCKETS, type Bucket } from "../quota/limits";
import type { DailyCounts, DailyRow, UsageEvent } from "./port";

/**
 * The usage_daily projection rules, shared by both adapters:
 *  - requests: every event (every metered request that passed authentication);
 *  - errors: status >= 400 except 429 (a client error such as 404 service_not_found, or a
 *    server error);
 *  - rateLimited: status 429 (refused before the handler; it consumed no quota).
 * Counts one event of this status into `c`.
 */
export function countInto(c: DailyCounts, status: number, n = 1): void {
  c.requests += n;
  if (status === 429) c.rateLimited += n;
  else if (status >= 400) c.errors += n;
}

export const zeroCounts = (): DailyCounts => ({ requests: 0, errors: 0, rateLimited: 0 });

export function addCounts(into: DailyCounts, more: DailyCounts): void {
  into.requests += more.requests;
  into.errors += more.errors;
  into.rateLimited += more.rateLimited;
}

/** usage_daily held in memory: account → day → bucket → counts. */
export class DailyProjection {
  private rows = new Map<string, Map<string, Map<Bucket, DailyCounts>>>();

  /** Fold in a batch; consecutive events of one account and day share their lookups. */
  addAll(
    events: readonly Pick<UsageEvent, "accountId" | "day" | "bucket" | "status" | "count">[],
  ): void {
    let buckets: Map<Bucket, DailyCounts> | undefined;
    let account = "";
    let day = "";
    for (const e of events) {
      if (!buckets || e.accountId !== account || e.day !== day) {
        account = e.accountId;
        day = e.day;
        buckets = this.bucketsOf(account, day);
      }
      let counts = buckets.get(e.bucket);
      if (!counts) {
        counts = zeroCounts();
        buckets.set(e.bucket, counts);
      }
      countInto(counts, e.status, e.count ?? 1);
    }
  }

  /** Fold in one event's counts (the start-up replay, which reuses one object per line). */
  add(accountId: string, day: string, bucket: Bucket, status: number, count: number): void {
    const buckets = this.bucketsOf(accountId, day);
    let counts = buckets.get(bucket);
    if (!counts) {
      counts = zeroCounts();
      buckets.set(bucket, counts);
    }
    countInto(counts, status, count);
  }

  private bucketsOf(accountId: string, day: string): Map<Bucket, DailyCounts> {
    let days = this.rows.get(accountId);
    if (!days) {
      days = new Map();
      this.rows.set(accountId, days);
    }
    let buckets = days.get(day);
    if (!buckets) {
      buckets = new Map();
      days.set(day, buckets);
    }
    return buckets;
  }

  query(accountId: string, from: string, to: string): DailyRow[] {
    const out: DailyRow[] = [];
    for (const [day, buckets] of this.rows.get(accountId) ?? []) {
      if (day < from || day > to) continue;
      for (const [bucket, c] of buckets) out.push({ accountId, day, bucket, ...c });
    }
    return out.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  }

  /** every row of one UTC day (retention archives them before the day's events are removed) */
  rowsOfDay(day: string): DailyRow[] {
    const out: DailyRow[] = [];
    for (const [accountId, days] of this.rows)
      for (const [bucket, c] of days.get(day) ?? []) out.push({ accountId, day, bucket, ...c });
    return out;
  }

  /** add archived rows (counts of days whose events were removed) */
  addRows(rows: readonly DailyRow[]): void {
    for (const r of rows) {
      const buckets = this.bucketsOf(r.accountId, r.day);
      let counts = buckets.get(r.bucket);
      if (!counts) {
        counts = zeroCounts();
        buckets.set(r.bucket, counts);
      }
      addCounts(counts, r);
    }
  }

  get size(): number {
    let n = 0;
    for (const days of this.rows.values()) for (const b of days.values()) n += b.size;
    return n;
  }

  clear(): void {
    this.rows.clear();
  }
}

const BUCKET_SET = new Set<string>(BUCKETS);
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A line read back from a log is a usage event only if it has the fields the projections use. */
export function isUsageEvent(v: unknown): v is UsageEvent {
  const e = v as Partial<UsageEvent> | null;
  return (
    !!e &&
    typeof e === "object" &&
    typeof e.id === "string" &&
    typeof e.accountId === "string" &&
    typeof e.day === "string" &&
    DAY.test(e.day) &&
    typeof e.bucket === "string" &&
    BUCKET_SET.has(e.bucket) &&
    typeof e.status === "number" &&
    (e.count === undefined || (Number.isInteger(e.count) && e.count >= 1))
  );
}
