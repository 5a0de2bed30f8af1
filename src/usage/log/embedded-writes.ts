import { LRUCache } from "lru-cache";
import { DAY_MS, utcDay } from "../../platform/day";
import type { Database } from "../../store/embedded/db";
import { type Batch, dayNo, nextQ, sameBatch } from "./batch";
import { decodePeriod, encodePeriod, foldBatch, missesOfBatch, PeriodCells } from "./period";
import { dailyRowsOf, firstHourKept } from "./port";
import { decodeRow, encodeRow, rowIds } from "./rows";
import { StringTable } from "./strings";

/**
 * The embedded usage log's tables (docs/usage-events.md, "Stores"):
 *  - usage_strings: every string the log and projections refer to, as an integer id;
 *  - usage_log: one row per batch (account, t0, q): its events column by column (rows.ts);
 *  - usage_days, usage_hours: one row per account and UTC day / hour: the analytics cells of
 *    the five rollups and the brands the period keeps (period.ts); usage_daily's counts are the
 *    day's `bs` cells. Keyed by one integer, account id x 2^24 + period number (periodKey): a
 *    rowid table keeps a row of up to ~4 KB in its page, where a WITHOUT ROWID table moves
 *    the part past ~1 KB to an overflow page of its own (most of it left empty);
 *  - usage_misses: one row per UTC day, account and miss;
 *  - usage_accounts: the accounts that have log rows (retention and the tally walk them);
 *  - usage_daily: counts of days the per-event log kept apart from their cells (an older
 *    DATA_DIR's archive), read instead of the day's cells;
 *  - usage_meta: layout version and migration state.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_strings (
  id INTEGER PRIMARY KEY,
  s TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS usage_log (
  a INTEGER NOT NULL,
  t INTEGER NOT NULL,
  q INTEGER NOT NULL,
  n INTEGER NOT NULL,
  d BLOB NOT NULL,
  PRIMARY KEY (a, t, q)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_days (
  k INTEGER PRIMARY KEY,
  d BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_hours (
  k INTEGER PRIMARY KEY,
  d BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_accounts (
  a INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS usage_misses (
  day TEXT NOT NULL,
  account TEXT NOT NULL,
  miss TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (day, account, miss)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_daily (
  day TEXT NOT NULL,
  account TEXT NOT NULL,
  bucket TEXT NOT NULL,
  requests INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  rate_limited INTEGER NOT NULL,
  PRIMARY KEY (day, account, bucket)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** The writer connection's page cache, KiB (SQLite's default is 2 MiB). */
const WRITER_CACHE_KB = 65_536;

/**
 * Cells of period rows a writer keeps decoded in memory (about 350 bytes of heap each: 70 MB),
 * the rows of the last two days and hours of the active accounts, the least recently written
 * out first. A row's cells are counted each time it is written back.
 */
const CACHE_CELLS = 200_000;

const cellsOf = (p: PeriodCells): number => {
  let n = 1;
  for (const v of p.views) n += v.size;
  return n;
};

export interface WriteOptions {
  /** each transaction on disk before it returns (USAGE_DURABILITY=strict) */
  durable?: boolean;
  /** USAGE_HOURLY_DAYS: hours older than this many UTC days get no hourly cells */
  hourlyDays?: number;
  /** the clock (tests) */
  now?: () => number;
  /** cells of period rows kept decoded between appends (default CACHE_CELLS) */
  cacheCells?: number;
}

/** Period numbers per account in a period row's key (hour numbers up to the year 3883). */
const PERIODS = 2 ** 24;
/** The key of account `a`'s period row `p` (usage_days, usage_hours). */
export const periodKey = (a: number, p: number): number => a * PERIODS + p;
/** The period number of a period row's key. */
export const periodOfKey = (k: number): number => k % PERIODS;
/** The account id of a period row's key. */
export const accountOfKey = (k: number): number => Math.floor(k / PERIODS);

/** A period row's key: usage_days or usage_hours, account id, period number. */
type RowKey = { table: "usage_days" | "usage_hours"; a: number; p: number };

/**
 * The writes of the embedded usage log on one connection: appends (a batch stored and counted
 * in one transaction), retention, rebuild. They run on the usage write thread (embedded.ts,
 * embedded-worker.ts), or inline where no thread can start.
 */
export class EmbeddedWrites {
  readonly strings: StringTable;
  private accounts = new Set<number>();
  /**
   * The period rows this writer read or wrote lately, decoded (no read and decode per append):
   * valid while no other connection wrote usage rows since (usage_meta `writes`, a counter every
   * usage write transaction raises), dropped when a transaction rolls back.
   */
  private cache: LRUCache<string, PeriodCells>;
  /** `writes` as this writer's last transaction left it (-1: unknown) */
  private writesSeen = -1;
  private readonly durable: boolean;
  readonly hourlyDays: number;
  readonly now: () => number;

  constructor(
    readonly db: Database,
    opts: WriteOptions = {},
  ) {
    this.cache = new LRUCache({
      maxSize: opts.cacheCells ?? CACHE_CELLS,
      sizeCalculation: cellsOf,
    });
    db.exec(SCHEMA);
    // appends touch the newest leaf of every active account's rows: kept in the page cache
    db.exec(`PRAGMA cache_size = -${WRITER_CACHE_KB}`);
    this.strings = new StringTable(db);
    this.durable = opts.durable === true;
    this.hourlyDays = opts.hourlyDays ?? 90;
    this.now = opts.now ?? Date.now;
  }

  /** Run `fn` in one write transaction, the string ids it makes forgotten if it rolls back. */
  tx<T>(fn: () => T): T {
    this.strings.begin();
    let writes = -1;
    try {
      const out = this.db.tx(() => {
        const seen =
          this.db.get<{ value: number }>("SELECT value FROM usage_meta WHERE name = 'writes'")
            ?.value ?? 0;
        // another connection wrote usage rows: what this one remembers may be stale
        if (seen !== this.writesSeen) this.cache.clear();
        const r = fn();
        writes = seen + 1;
        this.db.run(
          "INSERT INTO usage_meta (name, value) VALUES ('writes', ?) ON CONFLICT DO UPDATE SET value = excluded.value",
          writes,
        );
        return r;
      }, this.durable);
      this.strings.commit();
      this.writesSeen = writes;
      return out;
    } catch (err) {
      this.strings.rollback();
      // accounts it noted are not in usage_accounts: noted again by the next append; rows it
      // changed in memory were not written
      this.accounts.clear();
      this.cache.clear();
      this.writesSeen = -1;
      throw err;
    }
  }

  /**
   * Store the batches not stored yet and count them, in one transaction: each new batch is a
   * log row; a batch whose id is there already is compared with the row (the same events: a
   * retry, skipped; others: a batch that happens to have that id, stored under the next free
   * number derived from it). Then, per account, its day and hour rows are read, the new
   * batches folded in, and written back; and its misses counted. Returns the events stored.
   */
  append(batches: readonly Batch[]): number {
    if (batches.length === 0) return 0;
    return this.tx(() => this.store(batches));
  }

  /** Store log rows of the batches not stored yet, without counting them (a migration's). */
  storeOnly(batches: readonly Batch[]): number {
    return this.insertRows(batches).stored;
  }

  private store(batches: readonly Batch[]): number {
    const { stored, fresh } = this.insertRows(batches);
    for (const [a, list] of fresh) this.project(a, list);
    return stored;
  }

  /** The new batches' log rows inserted; the new ones by account. */
  private insertRows(batches: readonly Batch[]) {
    const insert = this.db.stmt(
      "INSERT OR IGNORE INTO usage_log (a, t, q, n, d) VALUES (?, ?, ?, ?, ?)",
    );
    const fresh = new Map<number, Batch[]>();
    let stored = 0;
    for (const b of batches) {
      if (b.n === 0) continue;
      const a = this.strings.id(b.account);
      const row = encodeRow(b, this.strings);
      let again = false;
      for (let attempt = 0; ; attempt++) {
        if (insert.run(a, b.t0, b.q, b.n, row).changes > 0) break;
        // the id is taken: by this batch (a retry) or by another one
        if (this.isStored(a, b)) {
          again = true;
          break;
        }
        if (attempt > 16) throw new Error("usage batch id taken 16 times over");
        b.q = nextQ(b);
      }
      if (again) continue;
      stored += b.n;
      let list = fresh.get(a);
      if (!list) {
        list = [];
        fresh.set(a, list);
        if (!this.accounts.has(a)) {
          this.db.run("INSERT OR IGNORE INTO usage_accounts (a) VALUES (?)", a);
          this.accounts.add(a);
        }
      }
      list.push(b);
    }
    return { stored, fresh };
  }

  /** Whether the row (a, b.t0, b.q) holds batch `b`. */
  private isStored(a: number, b: Batch): boolean {
    const row = this.db.get<{ d: Uint8Array }>(
      "SELECT d FROM usage_log WHERE a = ? AND t = ? AND q = ?",
      a,
      b.t0,
      b.q,
    );
    if (!row) return false;
    this.strings.resolve(rowIds(row.d));
    const [had] = decodeRow(row.d, b.account, b.t0, b.q, this.strings);
    return had !== undefined && sameBatch(had, b);
  }

  /** Cells of the period rows kept decoded between appends. */
  get cachedCells(): number {
    return this.cache.calculatedSize;
  }

  /** Count new batches of account `a` into its day and hour rows and its misses. */
  project(a: number, list: readonly Batch[], keepCells?: Map<string, PeriodCells>): void {
    const rows = keepCells ?? new Map<string, PeriodCells>();
    // the cache keys of the rows below that stay in memory, by their keys in `rows`
    const hot = new Map<string, string>();
    const now = this.now();
    const firstHour = firstHourKept(this.hourlyDays, now);
    // the rows live traffic writes again and again: yesterday's and today's, the last hours'
    const hotDay = dayNo(now) - 1;
    const hotHour = Math.floor(now / 3_600_000) - 1;
    const get = (key: RowKey): PeriodCells => {
      const k = `${key.table}|${key.p}`;
      let p = rows.get(k);
      if (!p) {
        const isHot = !keepCells && key.p >= (key.table === "usage_days" ? hotDay : hotHour);
        const ck = `${key.table}|${key.a}|${key.p}`;
        p = (isHot ? this.cache.get(ck) : undefined) ?? this.readPeriod(key) ?? new PeriodCells();
        rows.set(k, p);
        if (isHot) hot.set(k, ck);
      }
      return p;
    };
    for (const b of list)
      foldBatch(b, {
        day: (p) => get({ table: "usage_days", a, p }),
        hour: (p) => (p < firstHour ? null : get({ table: "usage_hours", a, p })),
      });
    if (!keepCells) this.writePeriods(a, rows);
    // kept (or kept again) with the cells they hold now
    for (const [k, ck] of hot) this.cache.set(ck, rows.get(k) as PeriodCells);
    const misses = this.db.stmt(
      `INSERT INTO usage_misses (day, account, miss, n) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
    for (const b of list) {
      const m = missesOfBatch(b);
      if (m.size === 0) continue;
      const day = utcDay(b.t0);
      for (const [miss, n] of m) misses.run(day, b.account, miss, n);
    }
  }

  /** Write period rows (keys `table|p`) of account `a`. */
  writePeriods(a: number, rows: Map<string, PeriodCells>): void {
    for (const [k, p] of rows) {
      const [table, period] = k.split("|") as [RowKey["table"], string];
      this.db.run(
        `INSERT INTO ${table} (k, d) VALUES (?, ?) ON CONFLICT DO UPDATE SET d = excluded.d`,
        periodKey(a, Number(period)),
        encodePeriod(p, this.strings),
      );
    }
  }

  /** An account's daily counts of a day (its day row's `bs` cells), by bucket. */
  dailyOf(
    account: string,
    day: string,
  ): Map<string, { requests: number; errors: number; rateLimited: number }> {
    const out = new Map<string, { requests: number; errors: number; rateLimited: number }>();
    const a = this.strings.find(account);
    if (a === undefined) return out;
    const p = this.readPeriod({ table: "usage_days", a, p: dayNo(Date.parse(`${day}T00:00:00Z`)) });
    for (const { bucket, requests, errors, rateLimited } of dailyRowsOf(
      account,
      day,
      p?.views[0]?.values() ?? [],
    ))
      out.set(bucket, { requests, errors, rateLimited });
    return out;
  }

  private readPeriod(key: RowKey): PeriodCells | null {
    const row = this.db.get<{ d: Uint8Array }>(
      `SELECT d FROM ${key.table} WHERE k = ?`,
      periodKey(key.a, key.p),
    );
    return row ? decodePeriod(row.d, this.strings) : null;
  }

  /**
   * Retention: each account's log rows of days before `beforeDay` and hour rows before
   * `beforeHour` (hour number) deleted, a few accounts per transaction; day rows and misses stay.
   */
  async prune(beforeDay: string, beforeHour?: number): Promise<{ days: number; events: number }> {
    const t = Date.parse(`${beforeDay}T00:00:00Z`);
    const accounts = this.db.all<{ a: number }>("SELECT a FROM usage_accounts").map((r) => r.a);
    const days = new Set<number>();
    let events = 0;
    for (let i = 0; i < accounts.length; i += 100) {
      this.tx(() => {
        for (const a of accounts.slice(i, i + 100)) {
          for (const r of this.db.all<{ t: number; n: number }>(
            "SELECT t, n FROM usage_log WHERE a = ? AND t < ?",
            a,
            t,
          )) {
            days.add(dayNo(r.t));
            events += r.n;
          }
          this.db.run("DELETE FROM usage_log WHERE a = ? AND t < ?", a, t);
          if (beforeHour !== undefined)
            this.db.run(
              "DELETE FROM usage_hours WHERE k >= ? AND k < ?",
              periodKey(a, 0),
              periodKey(a, beforeHour),
            );
          this.cache.clear();
        }
      });
      await new Promise((r) => setImmediate(r));
    }
    return { days: days.size, events };
  }

  /**
   * Each account's day and hour rows and misses of every day still in the log recomputed from
   * its log rows (one transaction per account and day): the brands each period keeps stay,
   * brands it has no room for are counted under OTHER. Rows of days not in the log stay.
   */
  async rebuild(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; days: number }> {
    let events = 0;
    const days = new Set<number>();
    for (const [a, account] of this.accountsInLog())
      for (const day of this.daysOf(a)) {
        days.add(day);
        events += this.rebuildDay(a, account, day);
        progress?.({ day: utcDay(day * DAY_MS), events });
        await new Promise((r) => setImmediate(r));
      }
    return { events, days: days.size };
  }

  /** rebuild without yielding between days (a migration at open, before anything runs). */
  rebuildNow(): { events: number; days: number } {
    let events = 0;
    let days = 0;
    for (const [a, account] of this.accountsInLog())
      for (const day of this.daysOf(a)) {
        days++;
        events += this.rebuildDay(a, account, day);
      }
    return { events, days };
  }

  private accountsInLog(): [number, string][] {
    return this.db
      .all<{ a: number }>("SELECT a FROM usage_accounts")
      .map((r) => [r.a, this.strings.str(r.a)]);
  }

  /** The UTC days (day numbers) account `a` has log rows of. */
  private daysOf(a: number): number[] {
    const out: number[] = [];
    // one seek per day: the first row at or after each day's start
    for (let t = 0; ; ) {
      const r = this.db.get<{ t: number }>(
        "SELECT t FROM usage_log WHERE a = ? AND t >= ? ORDER BY t LIMIT 1",
        a,
        t,
      );
      if (!r) return out;
      const day = dayNo(r.t);
      out.push(day);
      t = (day + 1) * DAY_MS;
    }
  }

  /** One account's day recomputed from its log rows, in one transaction; returns its events. */
  private rebuildDay(a: number, account: string, day: number): number {
    const firstHour = firstHourKept(this.hourlyDays, this.now());
    return this.tx(() => {
      const lo = day * DAY_MS;
      const rows = new Map<string, PeriodCells>();
      const keep = (table: RowKey["table"], p: number) => {
        const had = this.readPeriod({ table, a, p });
        const fresh = new PeriodCells();
        if (had) fresh.brands = had.brands.slice();
        rows.set(`${table}|${p}`, fresh);
      };
      keep("usage_days", day);
      for (let h = day * 24; h < day * 24 + 24; h++) if (h >= firstHour) keep("usage_hours", h);
      this.db.run("DELETE FROM usage_misses WHERE day = ? AND account = ?", utcDay(lo), account);
      let n = 0;
      const batches: Batch[] = [];
      for (const r of this.db.all<{ t: number; q: number; d: Uint8Array }>(
        "SELECT t, q, d FROM usage_log WHERE a = ? AND t >= ? AND t < ? ORDER BY t, q",
        a,
        lo,
        lo + DAY_MS,
      )) {
        this.strings.resolve(rowIds(r.d));
        for (const b of decodeRow(r.d, account, r.t, r.q, this.strings)) {
          batches.push(b);
          n += b.n;
        }
      }
      this.project(a, batches, rows);
      // hours without events keep no row
      for (const [k, p] of rows) if (p.empty && k.startsWith("usage_hours")) rows.delete(k);
      this.db.run(
        "DELETE FROM usage_hours WHERE k >= ? AND k < ?",
        periodKey(a, day * 24),
        periodKey(a, day * 24 + 24),
      );
      this.writePeriods(a, rows);
      this.cache.clear();
      return n;
    });
  }
}
