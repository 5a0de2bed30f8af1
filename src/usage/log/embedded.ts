import { join } from "node:path";
import { DAY_MS, dayStart, utcDay } from "../../platform/day";
import type { CountableEvent } from "../../quota/gate";
import type { Bucket } from "../../quota/limits";
import { Database, DB_FILE } from "../../store/embedded/db";
import type { Granularity, Rollup } from "../analytics/cells";
import { type Batch, dayNo, encodeFrames, eventId, idOf, parseEventId } from "./batch";
import { migrateEmbedded } from "./embedded-migrate";
import { WriteThread, WriteThreadDied } from "./embedded-thread";
import { accountOfKey, EmbeddedWrites, periodKey, periodOfKey, SCHEMA } from "./embedded-writes";
import { exportLines } from "./export-lines";
import { RowLines, type RowScan, scanRow } from "./export-rows";
import { decodePeriod, OTHER, periodIds, readCells, rollupNo } from "./period";
import {
  byDayAndBucket,
  type CellHint,
  type DailyRow,
  dailyRowsOf,
  type ExportQuery,
  type ExportStream,
  type PeriodRow,
  type UsageLog,
} from "./port";
import { decodeRow, rowIds } from "./rows";
import { StringTable } from "./strings";

export interface EmbeddedLogOptions {
  /**
   * USAGE_DURABILITY=strict: each append's transaction is on disk (synchronous=FULL for it)
   * before it resolves; else a commit survives a crash of the process, and a power loss may
   * take the last ones (WAL, synchronous=NORMAL)
   */
  durable?: boolean;
  /** USAGE_HOURLY_DAYS (default 90) */
  hourlyDays?: number;
  /**
   * where writes run: `worker` (the default for a database file) a thread with its own
   * connection (embedded-thread.ts), so a transaction never blocks the request thread;
   * `inline` the store's connection, on the calling thread
   */
  writer?: "worker" | "inline";
  /** how long the write thread waits for another connection's write lock, in ms (default 5000) */
  busyTimeoutMs?: number;
  /** the write thread's script (tests; default: embedded-worker beside this module) */
  workerUrl?: URL;
  /** the clock (tests) */
  now?: () => number;
  /**
   * the DATA_DIR: databases and folders of earlier layouts found there are moved into the log
   * at open (embedded-migrate.ts)
   */
  migrateFrom?: string;
}

/** Log rows read per query by the export and the event walks. */
const CHUNK_ROWS = 1000;
/** Lines of an export chunk (about 250 KB). */
const CHUNK_LINES = 1000;
const BS = rollupNo("bs");
const K = rollupNo("k");
const HOUR_MS = 3_600_000;

/** The period string of a day or hour number. */
const periodName = (g: Granularity, p: number): string =>
  g === "day" ? utcDay(p * DAY_MS) : new Date(p * HOUR_MS).toISOString().slice(0, 13);

/** The day or hour number of a period string (YYYY-MM-DD or YYYY-MM-DDTHH). */
function periodNo(g: Granularity, period: string): number {
  if (g === "day") return Math.floor(dayStart(period.slice(0, 10)) / DAY_MS);
  const hh = period.length >= 13 ? period.slice(11, 13) : "00";
  return Math.floor(Date.parse(`${period.slice(0, 10)}T${hh}:00:00Z`) / HOUR_MS);
}

/**
 * The embedded usage log on the store's SQLite database (tables: embedded-writes.ts). Reads run
 * on the store's connection; appends, retention and rebuilds on the write thread's connection
 * (WAL lets reads run meanwhile), or inline where no thread can start.
 */
export class EmbeddedUsageLog implements UsageLog {
  /** the log opened its own database (open()) and closes it */
  private owned = false;
  readonly strings: StringTable;
  /** the write thread (null: writes on this connection) */
  readonly thread: WriteThread | null;
  /** writes on this connection: the fallback when the thread is unavailable */
  private inlineWrites: EmbeddedWrites | null = null;
  private readonly now: () => number;
  private readonly opts: EmbeddedLogOptions;

  constructor(
    readonly db: Database,
    opts: EmbeddedLogOptions = {},
  ) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    db.exec(SCHEMA);
    this.strings = new StringTable(db);
    if (opts.migrateFrom !== undefined) migrateEmbedded(this.writes, opts.migrateFrom);
    this.thread =
      (opts.writer ?? "worker") === "worker" && db.path !== ":memory:"
        ? new WriteThread(
            {
              path: db.path,
              durable: opts.durable === true,
              hourlyDays: opts.hourlyDays ?? 90,
              busyTimeoutMs: opts.busyTimeoutMs,
            },
            opts.workerUrl,
          )
        : null;
  }

  /** A log on its own database file under `dataDir` (tests, scripts). */
  static open(dataDir: string, opts: EmbeddedLogOptions = {}): EmbeddedUsageLog {
    const log = new EmbeddedUsageLog(new Database(join(dataDir, DB_FILE)), {
      migrateFrom: dataDir,
      ...opts,
    });
    log.owned = true;
    return log;
  }

  /** The writes on this connection (made on first use). */
  get writes(): EmbeddedWrites {
    this.inlineWrites ??= new EmbeddedWrites(this.db, {
      durable: this.opts.durable,
      hourlyDays: this.opts.hourlyDays,
      now: this.now,
    });
    return this.inlineWrites;
  }

  /**
   * Run a write on the thread; inline when it is unavailable (could not start). A thread that
   * died mid-write is replaced and the write sent once more: batches that had committed are
   * found again by their ids and not counted twice.
   */
  private async onThread<T>(
    post: (t: WriteThread) => Promise<T>,
    inline: () => T | Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; this.thread && !this.thread.unavailable; attempt++) {
      try {
        return await post(this.thread);
      } catch (err) {
        if (!(err instanceof WriteThreadDied) || (attempt > 0 && !this.thread.unavailable))
          throw err;
      }
    }
    return inline();
  }

  async append(batches: Batch[]): Promise<number> {
    if (batches.length === 0) return 0;
    return this.onThread(
      (t) => {
        const frames = encodeFrames(batches);
        const buf = frames.buffer.slice(frames.byteOffset, frames.byteOffset + frames.length);
        return t.request<number>({ op: "append", frames: buf as ArrayBuffer, now: this.now() }, [
          buf as ArrayBuffer,
        ]);
      },
      () => this.writes.append(batches),
    );
  }

  async settled(): Promise<void> {}

  /** The account's string id, or undefined when it never had a row. */
  private accountId(accountId: string): number | undefined {
    return this.strings.find(accountId);
  }

  /** Rows of a period table of one account, p from..to, each decoded (one rollup, or all). */
  private periods(table: "usage_days" | "usage_hours", a: number, lo: number, hi: number) {
    const rows = this.db.all<{ k: number; d: Uint8Array }>(
      `SELECT k, d FROM ${table} WHERE k >= ? AND k <= ? ORDER BY k`,
      periodKey(a, lo),
      periodKey(a, hi),
    );
    return rows.map((r) => ({ p: periodOfKey(r.k), d: r.d }));
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    const out: DailyRow[] = [];
    const overrides = this.db.all<{
      day: string;
      bucket: Bucket;
      requests: number;
      errors: number;
      rl: number;
    }>(
      `SELECT day, bucket, requests, errors, rate_limited AS rl FROM usage_daily
       WHERE account = ? AND day >= ? AND day <= ? ORDER BY day, bucket`,
      accountId,
      from,
      to,
    );
    const overridden = new Set(overrides.map((r) => r.day));
    const a = this.accountId(accountId);
    if (a !== undefined) {
      const rows = this.periods("usage_days", a, periodNo("day", from), periodNo("day", to));
      for (const r of rows) {
        const day = periodName("day", r.p);
        if (overridden.has(day)) continue;
        this.strings.resolve(periodIds(r.d, BS));
        const p = decodePeriod(r.d, this.strings, BS);
        out.push(
          ...dailyRowsOf(
            accountId,
            day,
            (
              p.views[BS] as Map<string, { f: unknown[]; n: number; e: number; r: number }>
            ).values(),
          ),
        );
      }
    }
    for (const r of overrides)
      out.push({
        accountId,
        day: r.day,
        bucket: r.bucket,
        requests: r.requests,
        errors: r.errors,
        rateLimited: r.rl,
      });
    return out.sort(byDayAndBucket);
  }

  async cells(
    accountId: string,
    granularity: Granularity,
    rollup: Rollup,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    const a = this.accountId(accountId);
    if (a === undefined) return [];
    const v = rollupNo(rollup);
    const rows = this.periods(
      granularity === "day" ? "usage_days" : "usage_hours",
      a,
      periodNo(granularity, from),
      periodNo(granularity, to),
    );
    // a brand= read: the brand as rows encode it (store id + 2); a brand never seen has no cells
    let brand: number | undefined;
    if (hint?.brand !== undefined && (rollup === "b" || rollup === "all")) {
      if (hint.brand === null) brand = 0;
      else if (hint.brand === OTHER) brand = 1;
      else {
        const id = this.strings.find(hint.brand as string);
        if (id === undefined) return [];
        brand = id + 2;
      }
    }
    const ids = new Set<number>();
    for (const r of rows) for (const id of periodIds(r.d, v)) ids.add(id);
    this.strings.resolve(ids);
    const keyAt = rollup === "k" ? 0 : rollup === "all" ? 2 : -1;
    const out: PeriodRow[] = [];
    for (const r of rows) {
      let cells = readCells(r.d, this.strings, v, brand);
      if (hint?.key !== undefined && keyAt >= 0)
        cells = cells.filter((c) => c.f[keyAt] === hint.key);
      if (cells.length > 0) out.push({ t: periodName(granularity, r.p), cells });
    }
    return out;
  }

  async misses(accountId: string | null, from: string, to: string): Promise<Map<string, number>> {
    const rows =
      accountId === null
        ? this.db.all<{ miss: string; n: number }>(
            "SELECT miss, sum(n) AS n FROM usage_misses WHERE day >= ? AND day <= ? GROUP BY miss",
            from,
            to,
          )
        : this.db.all<{ miss: string; n: number }>(
            `SELECT miss, sum(n) AS n FROM usage_misses
             WHERE day IN (SELECT value FROM json_each(?)) AND account = ? GROUP BY miss`,
            JSON.stringify(daysBetween(from, to)),
            accountId,
          );
    return new Map(rows.map((r) => [r.miss, r.n]));
  }

  /** Log rows of account `a` after (t, q), t before `hi`, CHUNK_ROWS at a time. */
  private rowsAfter(a: number, t: number, q: number, hi: number) {
    return this.db.all<{ t: number; q: number; d: Uint8Array }>(
      "SELECT t, q, d FROM usage_log WHERE a = ? AND (t, q) > (?, ?) AND t < ? ORDER BY t, q LIMIT ?",
      a,
      t,
      q,
      hi,
      CHUNK_ROWS,
    );
  }

  private decode(account: string, r: { t: number; q: number; d: Uint8Array }): Batch[] {
    this.strings.resolve(rowIds(r.d));
    return decodeRow(r.d, account, r.t, r.q, this.strings);
  }

  /**
   * An export page: the account's log rows in id order from the cursor's row (found by the
   * greatest row key at or before the cursor's batch), events after the cursor, until `limit`
   * events or the first batch holding an event metered at or after `before` (the page stops
   * there, so a later page never finds an event behind its cursor). A row is counted from its
   * bytes (scanRow: its events and last time), its lines built from them when sent; only rows
   * the scan does not read (events moved from the per-event layout, with their own ids) are
   * decoded into batches, held until their lines are sent.
   */
  async exportStream(accountId: string, q: ExportQuery): Promise<ExportStream> {
    const empty: ExportStream = { events: 0, last: null, next: async () => null, close() {} };
    const a = this.accountId(accountId);
    if (a === undefined || q.limit <= 0) return empty;
    const lo = dayStart(q.from);
    const hi = dayStart(q.to) + DAY_MS;
    let t = lo;
    let qq = -1;
    const after = q.after;
    const c = after === null ? null : parseEventId(after);
    if (c) {
      const row = this.db.get<{ t: number; q: number }>(
        "SELECT t, q FROM usage_log WHERE a = ? AND (t, q) <= (?, ?) ORDER BY t DESC, q DESC LIMIT 1",
        a,
        c.t0,
        c.q,
      );
      // from that row (its events after the cursor are listed), or from the range's start
      if (row && row.t >= lo) {
        t = row.t;
        qq = row.q - 1;
      } else if (c.t0 >= lo) {
        t = c.t0;
        qq = -1;
      }
    }
    // rows as their bytes with the events to list (skip, take), or as decoded batches
    const page: ({ t: number; q: number; d: Uint8Array; skip: number; take: number } | Batch[])[] =
      [];
    const scan: RowScan = { n: 0, last: 0 };
    let events = 0;
    let last: string | null = null;
    let lastRow: { t: number; q: number; pos: number } | null = null;
    let stop = false;
    while (!stop && events < q.limit) {
      const rows = this.rowsAfter(a, t, qq, hi);
      if (rows.length === 0) break;
      for (const r of rows) {
        t = r.t;
        qq = r.q;
        if (scanRow(r.d, r.t, scan)) {
          if (scan.last >= q.before) {
            stop = true;
            break;
          }
          // ids sort as (t0, q, position): a row before the cursor's batch lists nothing, the
          // cursor's batch the events after its position
          let skip = 0;
          if (c && after !== null)
            skip =
              r.t < c.t0 || (r.t === c.t0 && r.q < c.q)
                ? scan.n
                : r.t === c.t0 && r.q === c.q
                  ? Math.min(scan.n, c.pos + 1)
                  : 0;
          const take = Math.min(scan.n - skip, q.limit - events);
          if (take > 0) {
            page.push({ t: r.t, q: r.q, d: r.d, skip, take });
            events += take;
            lastRow = { t: r.t, q: r.q, pos: skip + take - 1 };
            last = null;
          }
        } else {
          const kept: Batch[] = [];
          for (const b of this.decode(accountId, r)) {
            if ((b.at[b.n - 1] as number) >= q.before) {
              stop = true;
              break;
            }
            let n = 0;
            for (let i = 0; i < b.n && events < q.limit; i++) {
              const id = idOf(b, i);
              if (after !== null && id <= after) continue;
              events++;
              n++;
              last = id;
              lastRow = null;
            }
            if (n > 0) kept.push(b);
            if (events >= q.limit) break;
          }
          if (kept.length > 0) page.push(kept);
        }
        if (stop || events >= q.limit) break;
      }
    }
    if (events === 0) return empty;
    if (lastRow) last = eventId(lastRow.t, lastRow.q, lastRow.pos);
    const lines = new RowLines(accountId, (id) => this.strings.str(id));
    let i = 0;
    let left = events;
    return {
      events,
      last,
      async next() {
        if (left <= 0 || i >= page.length) return null;
        let count = 0;
        while (i < page.length && count < CHUNK_LINES && left > 0) {
          const p = page[i++] as (typeof page)[number];
          if (Array.isArray(p))
            for (const b of p) {
              const out: string[] = [];
              const n = exportLines(b, after, left, out);
              lines.write(out.join(""));
              left -= n;
              count += n;
            }
          else {
            lines.lines(p.d, p.t, p.q, p.skip, p.take);
            left -= p.take;
            count += p.take;
          }
        }
        return lines.take();
      },
      close() {
        left = 0;
        page.length = 0;
      },
    };
  }

  async *events(accountId: string, from: string, to: string): AsyncIterable<Batch> {
    const a = this.accountId(accountId);
    if (a === undefined) return;
    let t = dayStart(from);
    let q = -1;
    const hi = dayStart(to) + DAY_MS;
    for (;;) {
      const rows = this.rowsAfter(a, t, q, hi);
      if (rows.length === 0) return;
      for (const r of rows) {
        t = r.t;
        q = r.q;
        yield* this.decode(accountId, r);
      }
    }
  }

  /** The day's requests by account, key, bucket and status, from each account's day row. */
  *tallyOfDay(day: string): Iterable<CountableEvent> {
    const p = periodNo("day", day);
    const rows = this.db.all<{ k: number; d: Uint8Array }>(
      `SELECT k, d FROM usage_days WHERE k IN (SELECT a * ${periodKey(1, 0)} + ? FROM usage_accounts)`,
      p,
    );
    for (const r of rows) {
      this.strings.resolve(periodIds(r.d, K));
      const accountId = this.strings.str(accountOfKey(r.k));
      const cells = decodePeriod(r.d, this.strings, K).views[K] as Map<
        string,
        { f: unknown[]; n: number }
      >;
      for (const c of cells.values())
        yield {
          day,
          accountId,
          keyId: c.f[0] as string,
          bucket: c.f[1] as Bucket,
          status: c.f[2] as number,
          events: c.n,
        };
    }
  }

  async holds(ids: readonly { account: string; t0: number; q: number }[]): Promise<boolean[]> {
    return ids.map(({ account, t0, q }) => {
      const a = this.accountId(account);
      return (
        a !== undefined &&
        this.db.get("SELECT 1 AS x FROM usage_log WHERE a = ? AND t = ? AND q = ?", a, t0, q) !==
          undefined
      );
    });
  }

  async rebuild(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; days: number }> {
    return this.onThread(
      (t) => t.request({ op: "rebuild", now: this.now() }, [], progress),
      () => this.writes.rebuild(progress),
    );
  }

  async prune(beforeDay: string, beforeHour?: string): Promise<{ days: number; events: number }> {
    const hour = beforeHour === undefined ? undefined : periodNo("hour", beforeHour);
    return this.onThread(
      (t) => t.request({ op: "prune", beforeDay, beforeHour: hour }),
      () => this.writes.prune(beforeDay, hour),
    );
  }

  /** events in the log */
  get size(): number {
    return this.db.get<{ n: number }>("SELECT coalesce(sum(n), 0) AS n FROM usage_log")?.n ?? 0;
  }

  async close() {
    await this.thread?.close();
    if (this.owned) this.db.close();
  }
}

/** The UTC days from..to, as YYYY-MM-DD. */
function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = dayNo(dayStart(from)); out.length < 3660; d++) {
    const day = utcDay(d * DAY_MS);
    if (day > to) break;
    out.push(day);
  }
  return out;
}

export { OTHER };
