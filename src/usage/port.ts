import type { CountableEvent } from "../quota/gate";
import type { Bucket } from "../quota/limits";
import type { CellHint, KeyCount, PeriodRow, View } from "./analytics/cells";
import type { UsageEvent } from "./event";
import type { RecorderCondition } from "./recorder-condition";

export type { UsageEvent };

/**
 * What a metered request hands to the recorder: the event without its id, ts and day, plus the
 * time it was metered. The recorder derives those three when it writes the batch, so the
 * request path allocates one object per event and no strings.
 */
export type UsageInput = Omit<UsageEvent, "id" | "ts" | "day"> & {
  /** epoch ms when the request was metered (becomes ts, day and the id's time) */
  at: number;
};

/** Receives usage events off the request path (buffers and flushes on its own). */
export interface UsageRecorder {
  /**
   * Buffer the event. With USAGE_DURABILITY=strict it returns a promise that resolves once the
   * event is durable (rejects when it was dropped): the request is acknowledged after it.
   */
  record(event: UsageInput): undefined | Promise<void>;
  /** write whatever is buffered now (tests, admin) */
  flush(): Promise<void>;
  /** flush whatever is buffered; called on shutdown */
  close(): Promise<void>;
  /** whether events pile up unwritten (readiness); absent = always ok */
  condition?(): RecorderCondition;
  /** USAGE_DURABILITY=strict: `record` returns a promise to await before answering */
  readonly strict?: boolean;
  /** false when a metered request must be refused: its event could not be kept */
  accepting?(): boolean;
}

export const noopRecorder: UsageRecorder = {
  record: () => undefined,
  async flush() {},
  async close() {},
};

/** Counts of one account, UTC day and bucket: a row of the usage_daily projection. */
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

/**
 * The usage event log plus its usage_daily projection. Adapters: store/embedded/usage.ts
 * (usage_events and its projections in the embedded SQLite database) and store/mongo/usage.ts
 * (usage_events, usage_daily).
 */
export interface UsageEventStore {
  /**
   * Append events and fold them into usage_daily. Idempotent: events whose id is already
   * stored are skipped (and not counted twice). Resolves to the number newly stored; rejects
   * when the store is unavailable (the caller retries the whole batch).
   *
   * `fresh: true` promises that none of the events was handed to the store before (a batch's
   * first attempt, with newly minted ids), so an adapter may skip its duplicate check on that
   * hot path, and that they were just made by eventOf (fields in canonical order, so the
   * embedded adapter serializes them as they are). Retries and spill replays leave it unset
   * and are always checked.
   */
  append(events: UsageEvent[], opts?: { fresh?: boolean }): Promise<number>;
  /** usage_daily rows of one account for days from..to (inclusive, YYYY-MM-DD) */
  daily(accountId: string, from: string, to: string): Promise<DailyRow[]>;
  /**
   * The analytics cells (see usage/analytics/cells.ts) of one account and view (granularity and
   * rollup) for the periods from..to (inclusive: YYYY-MM-DD days, or YYYY-MM-DDTHH hours). A
   * period may come in several rows (one per writer): the caller sums them. `hint` (the
   * query's brand or key filter) lets an adapter leave out cells of other brands or keys; the
   * caller filters again.
   */
  cells(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]>;
  /**
   * Per cell key of one account and view over from..to (`hint` as in `cells`), its
   * requests (the cells' `n` summed over the periods) and its cells (the periods it has one
   * in), read without histograms: a series grouped by brand ranks its groups by it, then, when
   * that reads fewer cells, reads the cells of the top groups' keys only (`cells` with
   * `hint.keys`).
   */
  cellCounts(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<Map<string, KeyCount>>;
  /** miss counts (see UsageEvent.miss) of days from..to: of one account, or of all (null) */
  misses(accountId: string | null, from: string, to: string): Promise<Map<string, number>>;
  /**
   * One page of an account's raw events for the export: days from..to, ids after `after` (or
   * from the first), `ts` before `before`, ascending by id, at most `limit`.
   */
  exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]>;
  /**
   * Optional: the same page streamed, so it is never held in memory whole: its size and last id
   * are known before its lines are read out, a chunk at a time.
   */
  exportStream?(accountId: string, q: ExportQuery): Promise<ExportStream>;
  /** every stored event of one UTC day (each id once) */
  eventsOfDay(day: string): AsyncIterable<UsageEvent>;
  /**
   * Optional: the recent day's events counted by account, key, bucket and status (`events`
   * each), kept up to date by the store, so a counter rebuild need not read the day's log.
   * Without it, or when it answers null (a day it does not tally), callers use eventsOfDay.
   */
  tallyOfDay?(day: string): CountableEvent[] | null;
  /**
   * recompute usage_daily and the analytics cells and misses from the whole event log (rows of
   * pruned days are kept as they are); `progress` hears about each day read
   */
  rebuildDaily(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; rows: number }>;
  /**
   * Retention: remove the raw events of every UTC day before `beforeDay` (YYYY-MM-DD). Their
   * usage_daily rows are kept (forever): a day's rows are made durable before its events go.
   */
  prune(beforeDay: string): Promise<{ days: number; events: number }>;
  close(): Promise<void>;
}

/** An export page read out a chunk at a time, oldest first. */
export interface ExportStream {
  /** events in the page */
  events: number;
  /** the id of the page's last event (null: empty page) */
  last: string | null;
  /**
   * the next chunk of the page as NDJSON (UTF-8, whole lines, each ending in a newline), or null
   * at the end (then the stream has released what it held)
   */
  next(): Promise<Uint8Array | null>;
  /** release what the stream holds when it is not read to the end */
  close(): void;
}

export interface ExportQuery {
  from: string;
  to: string;
  after: string | null;
  /** ISO 8601 time: only events metered before it */
  before: string;
  limit: number;
}
