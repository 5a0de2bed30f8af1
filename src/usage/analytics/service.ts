import { DAY_MS, dayStart, utcDay } from "../../platform/day";
import { invalid } from "../../platform/domain-errors";
import { BUCKETS, type Bucket, type Tier } from "../../quota/limits";
import type { Principal } from "../../quota/principal";
import { addCounts, zeroCounts } from "../daily";
import type { DailyCounts, UsageLog } from "../log/port";

/** Longest range one call may ask for, in days (from and to included). */
export const MAX_RANGE_DAYS = 366;
/** Days covered when `from` is not given (ending at `to`, default today UTC). */
export const DEFAULT_RANGE_DAYS = 30;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type BucketCounts = Partial<Record<Bucket, DailyCounts>>;

export interface UsageHistory {
  tier: Tier;
  from: string;
  to: string;
  bucket: Bucket | null;
  days: { date: string; buckets: BucketCounts }[];
  totals: BucketCounts;
}

export interface HistoryQuery {
  from?: string;
  to?: string;
  bucket?: Bucket;
}

/** Epoch ms of a YYYY-MM-DD that is a real calendar date; else 422 naming the parameter. */
function parseDay(value: string, name: string): number {
  const m = DATE.exec(value);
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999
  const ms = m
    ? new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
    : Number.NaN;
  if (!m || Number.isNaN(ms) || utcDay(ms) !== value)
    throw invalid(
      `Invalid query parameter ${name}: must be a calendar date YYYY-MM-DD (got "${value}")`,
    );
  return ms;
}

/**
 * The day range of a query: `to` defaults to today (UTC), `from` to 29 days before `to` (30
 * days in all). 422 validation_error when a date is not a real YYYY-MM-DD, when to is before
 * from, or when the range is longer than 366 days.
 */
export function resolveRange(
  q: HistoryQuery,
  now = new Date(),
  opts: { maxDays?: number; defaultDays?: number; what?: string } = {},
): { from: string; to: string } {
  const maxDays = opts.maxDays ?? MAX_RANGE_DAYS;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const to = q.to === undefined ? today : parseDay(q.to, "to");
  const from =
    q.from === undefined
      ? to - ((opts.defaultDays ?? DEFAULT_RANGE_DAYS) - 1) * DAY_MS
      : parseDay(q.from, "from");
  if (to < from)
    throw invalid(`Invalid date range: to (${utcDay(to)}) is before from (${utcDay(from)})`);
  const days = (to - from) / DAY_MS + 1;
  if (days > maxDays)
    throw invalid(
      `Invalid date range: ${days} days requested, at most ${maxDays} per call${opts.what ? ` ${opts.what}` : ""}`,
    );
  return { from: utcDay(from), to: utcDay(to) };
}

/**
 * An account's usage per UTC day and bucket, read from the usage_daily projection. Every
 * day of the range is listed (zero-filled); every bucket (or only the one asked for) appears
 * in each day and in the totals. All keys of the account count, current and revoked.
 */
export async function usageHistory(
  store: Pick<UsageLog, "daily">,
  principal: Principal,
  q: HistoryQuery,
  now = new Date(),
): Promise<UsageHistory> {
  const { from, to } = resolveRange(q, now);
  const buckets: readonly Bucket[] = q.bucket ? [q.bucket] : BUCKETS;
  const empty = (): BucketCounts => Object.fromEntries(buckets.map((b) => [b, zeroCounts()]));
  const byDay = new Map<string, BucketCounts>();
  const days: UsageHistory["days"] = [];
  for (let ms = dayStart(from); utcDay(ms) <= to; ms += DAY_MS) {
    const entry = { date: utcDay(ms), buckets: empty() };
    byDay.set(entry.date, entry.buckets);
    days.push(entry);
  }
  const totals = empty();
  for (const row of await store.daily(principal.accountId, from, to)) {
    const day = byDay.get(row.day)?.[row.bucket];
    const total = totals[row.bucket];
    if (!day || !total) continue; // a bucket filtered out
    addCounts(day, row);
    addCounts(total, row);
  }
  return { tier: principal.tier, from, to, bucket: q.bucket ?? null, days, totals };
}
