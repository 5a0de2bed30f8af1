import { BUCKETS, type Bucket } from "../quota/limits";
import type { DailyCounts, DailyRow, UsageEvent } from "./port";

/**
 * The usage_daily projection rules, shared by both adapters:
 *  - requests: every event (every metered request that passed authentication);
 *  - errors: status >= 400 except 429 (a client error such as 404 service_not_found, or a
 *    server error);
 *  - rateLimited: status 429 (refused before the handler; it consumed no quota).
 */
export function countsOf(status: number): DailyCounts {
  return {
    requests: 1,
    errors: status >= 400 && status !== 429 ? 1 : 0,
    rateLimited: status === 429 ? 1 : 0,
  };
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

  add(e: Pick<UsageEvent, "accountId" | "day" | "bucket" | "status">): void {
    let days = this.rows.get(e.accountId);
    if (!days) {
      days = new Map();
      this.rows.set(e.accountId, days);
    }
    let buckets = days.get(e.day);
    if (!buckets) {
      buckets = new Map();
      days.set(e.day, buckets);
    }
    let counts = buckets.get(e.bucket);
    if (!counts) {
      counts = zeroCounts();
      buckets.set(e.bucket, counts);
    }
    addCounts(counts, countsOf(e.status));
  }

  query(accountId: string, from: string, to: string): DailyRow[] {
    const out: DailyRow[] = [];
    for (const [day, buckets] of this.rows.get(accountId) ?? []) {
      if (day < from || day > to) continue;
      for (const [bucket, c] of buckets) out.push({ accountId, day, bucket, ...c });
    }
    return out.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
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
    typeof e.status === "number"
  );
}
