import type { CountableEvent } from "../../quota/gate";
import type { Bucket } from "../../quota/limits";
import type { Granularity, Rollup } from "../analytics/cells";
import type { Batch } from "./batch";
import type { PCell } from "./period";

/** Counts of one account, UTC day and bucket (the history of GET /v1/analytics/usage). */
export interface DailyCounts {
  /** every metered request that passed authentication, whatever its outcome */
  requests: number;
  /** answered with a 4xx or 5xx status other than 429 */
  errors: number;
  /** refused with 429 (daily quota exhausted) */
  rateLimited: number;
}

export interface DailyRow extends DailyCounts {
  accountId: string;
  day: string;
  bucket: Bucket;
}

/** A day's rows, one per bucket, from its `bs` cells (bucket, status). */
export function dailyRowsOf(
  accountId: string,
  day: string,
  cells: Iterable<{ f: unknown[]; n: number; e: number; r: number }>,
): DailyRow[] {
  const byBucket = new Map<string, DailyRow>();
  for (const c of cells) {
    const bucket = c.f[0] as Bucket;
    let row = byBucket.get(bucket);
    if (!row) {
      row = { accountId, day, bucket, requests: 0, errors: 0, rateLimited: 0 };
      byBucket.set(bucket, row);
    }
    row.requests += c.n;
    row.errors += c.e;
    row.rateLimited += c.r;
  }
  return [...byBucket.values()];
}

/** Daily rows in day order, then bucket order. */
export const byDayAndBucket = (x: DailyRow, y: DailyRow): number =>
  x.day !== y.day
    ? x.day < y.day
      ? -1
      : 1
    : x.bucket < y.bucket
      ? -1
      : x.bucket > y.bucket
        ? 1
        : 0;

/** One period's cells of one rollup, as read for a query. */
export interface PeriodRow {
  /** the period: YYYY-MM-DD, or YYYY-MM-DDTHH */
  t: string;
  cells: PCell[];
}

/** Filters a cells read may apply early; the caller filters again. */
export interface CellHint {
  /** only cells of this brand (a lower-cased slug; null: none; OTHER: the brands counted together) */
  brand?: string | null | symbol;
  /** only cells of this API key id ("" for bearer-token calls) */
  key?: string;
}

/** One page of an account's events for the export. */
export interface ExportQuery {
  /** UTC days, YYYY-MM-DD, inclusive */
  from: string;
  to: string;
  /** the id after which the page starts (null: from the first) */
  after: string | null;
  /** epoch ms: the page stops before the first batch holding an event metered at or after it */
  before: number;
  /** most events in the page */
  limit: number;
}

/** An export page read out a chunk at a time, oldest first. */
export interface ExportStream {
  /** events in the page */
  events: number;
  /** the id of the page's last event (null: empty page) */
  last: string | null;
  /** the next chunk as NDJSON (UTF-8 whole lines), or null at the end */
  next(): Promise<Uint8Array | null>;
  /** release what the stream holds when it is not read to the end */
  close(): void;
}

/** What a store reports about work it has not finished (GET /readyz, metrics). */
export interface StoreBacklog {
  /** batches stored in the log and not counted into the projections yet (MongoDB) */
  pendingBatches: number;
}

/**
 * The usage event log and its projections (docs/usage-events.md). Adapters:
 * `src/usage/log/embedded.ts` (SQLite) and `src/usage/log/mongo.ts` (MongoDB).
 */
export interface UsageLog {
  /**
   * Store batches and count them into the projections. Each batch is idempotent on its id
   * (account, t0, q): one stored before is not stored or counted again. Resolves to the events
   * newly stored once they are durable in the log (embedded: committed with their projections;
   * MongoDB: in the log, counted by the projector, at once when this instance projects); rejects
   * when the store is unavailable (the caller retries the same batches).
   */
  append(batches: Batch[]): Promise<number>;
  /** usage_daily rows of one account for days from..to (YYYY-MM-DD, inclusive) */
  daily(accountId: string, from: string, to: string): Promise<DailyRow[]>;
  /**
   * The cells of one account in one rollup, per period from..to (inclusive: days YYYY-MM-DD, or
   * hours YYYY-MM-DDTHH), periods without cells left out.
   */
  cells(
    accountId: string,
    granularity: Granularity,
    rollup: Rollup,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]>;
  /** miss counts of days from..to: of one account, or of all (null) */
  misses(accountId: string | null, from: string, to: string): Promise<Map<string, number>>;
  /** one export page, streamed (never held in memory as JSON) */
  exportStream(accountId: string, q: ExportQuery): Promise<ExportStream>;
  /** the events of one account and days (tests, rebuilds), in id order */
  events(accountId: string, from: string, to: string): AsyncIterable<Batch>;
  /**
   * A UTC day's requests counted by account, key, bucket and status (the quota counters' seed),
   * from the day's projections: never a scan of the day's events.
   */
  tallyOfDay(day: string): AsyncIterable<CountableEvent> | Iterable<CountableEvent>;
  /** which of these batch ids (`account|t0|q`) the log holds */
  holds(ids: readonly { account: string; t0: number; q: number }[]): Promise<boolean[]>;
  /** recompute the projections of every day still in the log; `progress` hears each day */
  rebuild(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; days: number }>;
  /**
   * Retention: remove the events of days before `beforeDay` (their projections stay) and the
   * hourly cells of hours before `beforeHour` (YYYY-MM-DDTHH; their days keep their counts).
   */
  prune(beforeDay: string, beforeHour?: string): Promise<{ days: number; events: number }>;
  /** Resolves once everything appended before the call is counted (tests; MongoDB's projector). */
  settled(): Promise<void>;
  backlog?(): StoreBacklog;
  close(): Promise<void>;
}

/**
 * The first UTC hour (hour number: hours since the epoch) whose cells a store keeps with
 * USAGE_HOURLY_DAYS = `days`: the hours of the last `days` UTC days, today included.
 */
export function firstHourKept(days: number, now = Date.now()): number {
  const today = Math.floor(now / 86_400_000);
  return (today - (days - 1)) * 24;
}
