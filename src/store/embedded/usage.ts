import { join } from "node:path";
import { DAY_MS, dayStart, utcDay } from "../../platform/day";
import { log } from "../../platform/log";
import type { CountableEvent } from "../../quota/gate";
import {
  allKey,
  BRAND_VIEWS,
  brandOfKey,
  type Cell,
  type CellHint,
  countCell,
  emptyCell,
  groupOf,
  hintFilter,
  hintNeedle,
  isUnbounded,
  type KeyCount,
  LAT_BINS,
  latencyBin,
  missesOf,
  otherKey,
  type PeriodCells,
  type PeriodRow,
  periodsBetween,
  presentAllKey,
  ROLLUP_NAMES,
  rollupKey,
  TOP_BRANDS,
  VIEWS,
  type View,
} from "../../usage/analytics/cells";
import { countInto, zeroCounts } from "../../usage/daily";
import type {
  DailyRow,
  ExportQuery,
  ExportStream,
  UsageEvent,
  UsageEventStore,
} from "../../usage/port";
import { usageEvent } from "../../usage/serialize";
import { Database, DB_FILE } from "./db";
import { importLegacyUsage } from "./usage-import";
import { UsageThread, UsageThreadDied } from "./usage-thread";

/**
 * The embedded usage event log and its projections, in the embedded store's SQLite database:
 *  - usage_events: the append-only log, one row per event (the event as JSON text, plus the
 *    columns reads filter by: account, day number, ts in epoch ms), in append order (rowid),
 *    with two indexes: (account, id), which finds a repeated id and serves the export, and
 *    (day), which serves eventsOfDay, prune and rebuild;
 *  - usage_daily, usage_cells (the analytics views of usage/analytics/cells.ts: one row per
 *    view, period, account and cell key, the latency histogram as a BLOB) and usage_misses:
 *    updated in the same transaction as the events they count, so an event is in the log and
 *    counted, or neither;
 *  - usage_brands: the brands each account, day and hour keeps cells of (at most TOP_BRANDS,
 *    the rest counted under OTHER_BRAND: cells.ts), written in that same transaction;
 *  - usage_meta: the cells' layout version (migrateCells).
 * Each batch's counts are summed in JS first: one upsert per distinct row per batch. The
 * projections' keys lead with the period, so a batch's upserts land in the pages of the current
 * day and hour, not scattered over the whole table; a read of one account seeks each period of
 * its range (json_each of the periods). Nothing of the projections is held in memory between
 * calls.
 */

/** usage_events: rows in append order (rowid), ids unique per account (the dedupe's key); the projections */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS usage_events (
  id TEXT NOT NULL,
  account TEXT NOT NULL,
  day INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  e TEXT NOT NULL,
  UNIQUE (account, id)
);
CREATE INDEX IF NOT EXISTS usage_events_day ON usage_events (day);
CREATE TABLE IF NOT EXISTS usage_daily (
  day TEXT NOT NULL,
  account TEXT NOT NULL,
  bucket TEXT NOT NULL,
  requests INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  rate_limited INTEGER NOT NULL,
  PRIMARY KEY (day, account, bucket)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_cells (
  view INTEGER NOT NULL,
  period TEXT NOT NULL,
  account TEXT NOT NULL,
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  e INTEGER NOT NULL,
  r INTEGER NOT NULL,
  h BLOB NOT NULL,
  PRIMARY KEY (view, period, account, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_brands (
  period TEXT NOT NULL,
  account TEXT NOT NULL,
  brand TEXT NOT NULL,
  PRIMARY KEY (period, account, brand)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_misses (
  day TEXT NOT NULL,
  account TEXT NOT NULL,
  miss TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (day, account, miss)
) WITHOUT ROWID;
`;

/** rows read per query by the export and eventsOfDay (a chunk of the stream) */
const CHUNK_ROWS = 1000;
/** the view number stored in usage_cells: its place in VIEWS */
const VIEW_NO = new Map(VIEWS.map((v, i) => [v, i]));
const DAY_K = VIEW_NO.get("day.k") as number;
/** the view numbers of the `all` rollup (day, hour) */
const ALL_VIEWS = VIEWS.flatMap((v, i) => (v.endsWith(".all") ? [i] : []));
/**
 * The layout of usage_cells, kept in usage_meta as `cells`: a database whose cells have another
 * (older) layout is migrated once at open (migrateCells).
 */
const CELLS_VERSION = 2;

export const dayNumber = (day: string): number => dayStart(day) / DAY_MS;
/** The UTC day of a day number (days since the epoch). */
const dayOfNumber = (n: number): string => utcDay(n * DAY_MS);

/** The last periodList made: a query's reads of several views ask for the same list. */
let lastList = { key: "", json: "[]" };

/** The periods from..to as a JSON array (periodsBetween). */
function periodList(from: string, to: string, hourly: boolean): string {
  const key = `${from}/${to}/${hourly}`;
  if (lastList.key !== key)
    lastList = { key, json: JSON.stringify(periodsBetween(from, to, hourly)) };
  return lastList.json;
}

/** A latency histogram (bin, requests pairs) as a BLOB: little-endian uint32 pairs. */
function histBlob(h: readonly number[]): Uint8Array {
  return new Uint8Array(Uint32Array.from(h).buffer);
}

function histOf(blob: Uint8Array | null): number[] {
  if (!blob || blob.byteLength < 8) return [];
  // read byte by byte: far quicker than a Uint32Array over each (small) BLOB
  const out = new Array<number>(blob.byteLength >> 2);
  for (let i = 0, j = 0; j < out.length; i += 4, j++)
    out[j] =
      ((blob[i] as number) |
        ((blob[i + 1] as number) << 8) |
        ((blob[i + 2] as number) << 16) |
        ((blob[i + 3] as number) << 24)) >>>
      0;
  return out;
}

/** usage_hist_add(a, b): histogram BLOB b added into a (the upsert of a cell). */
function histAdd(a: unknown, b: unknown): Uint8Array {
  const out = histOf(a as Uint8Array | null);
  const more = histOf(b as Uint8Array | null);
  for (let i = 0; i < more.length; i += 2) {
    const bin = more[i] as number;
    let j = 0;
    while (j < out.length && out[j] !== bin) j += 2;
    if (j < out.length) out[j + 1] = (out[j + 1] as number) + (more[i + 1] as number);
    else out.push(bin, more[i + 1] as number);
  }
  return histBlob(out);
}

/**
 * Which brands each (account, period) keeps cells of (usage_brands: the first TOP_BRANDS
 * distinct brands counted in the period, see cells.ts). Used inside a write's transaction: a
 * brand is looked up, and admitted while the period has room, in the order events are counted,
 * so a rebuild (events in append order, the table kept) admits as the live writes did.
 */
class BrandSlots {
  private sets = new Map<string, Set<string>>();
  constructor(private db: Database) {}

  /**
   * Read the brands of these (account, period) pairs in one query (a batch's accounts, days and
   * hours), rather than a query per pair.
   */
  preload(pairs: Iterable<[account: string, period: string]>): void {
    const list: [string, string][] = [];
    for (const [account, period] of pairs) {
      const k = `${account}\u0001${period}`;
      if (this.sets.has(k)) continue;
      this.sets.set(k, new Set());
      list.push([period, account]);
    }
    if (list.length === 0) return;
    const rows = this.db.all<{ period: string; account: string; brand: string }>(
      `SELECT period, account, brand FROM usage_brands WHERE (period, account) IN
         (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
      JSON.stringify(list),
    );
    for (const r of rows) this.sets.get(`${r.account}\u0001${r.period}`)?.add(r.brand);
  }

  /** Whether events of `brand` (encoded) in this account and period keep their own cells. */
  admits(account: string, period: string, brand: string): boolean {
    if (isUnbounded(brand)) return true;
    const k = `${account}\u0001${period}`;
    let set = this.sets.get(k);
    if (!set) {
      set = new Set(
        this.db
          .all<{ brand: string }>(
            "SELECT brand FROM usage_brands WHERE period = ? AND account = ?",
            period,
            account,
          )
          .map((r) => r.brand),
      );
      this.sets.set(k, set);
    }
    if (set.has(brand)) return true;
    if (set.size >= TOP_BRANDS) return false;
    set.add(brand);
    this.db.run(
      "INSERT INTO usage_brands (period, account, brand) VALUES (?, ?, ?)",
      period,
      account,
      brand,
    );
    return true;
  }
}

/** One batch's counts, summed before they are written (one upsert per distinct row). */
class Delta {
  constructor(private slots: BrandSlots) {}

  daily = new Map<string, DailyRow>();
  cells = new Map<
    string,
    { account: string; view: number; period: string; key: string; c: Cell }
  >();
  misses = new Map<string, { account: string; day: string; miss: string; n: number }>();

  /** an event group's (account, day, hour, `all` key) cells in every view, looked up once */
  private groups = new Map<string, Cell[]>();

  /**
   * The cells of one event group in the ten views (day and hour × rollup), made if new; in a
   * period whose brands are taken, its brand is counted under OTHER_BRAND.
   */
  private cellsOf(account: string, periods: string[], all: string, group: string): Cell[] {
    const out: Cell[] = [];
    const brand = brandOfKey(all);
    for (let g = 0; g < periods.length; g++) {
      const period = periods[g] as string;
      const own = this.slots.admits(account, period, brand) ? all : otherKey(all);
      for (let r = 0; r < ROLLUP_NAMES.length; r++) {
        const view = g * ROLLUP_NAMES.length + r;
        const key = rollupKey(own, ROLLUP_NAMES[r] as (typeof ROLLUP_NAMES)[number]);
        const ck = `${view}\u0001${period}\u0001${account}\u0001${key}`;
        let cell = this.cells.get(ck);
        if (!cell) {
          cell = { account, view, period, key, c: emptyCell() };
          this.cells.set(ck, cell);
        }
        out.push(cell.c);
      }
    }
    this.groups.set(group, out);
    return out;
  }

  add(e: UsageEvent, daily: boolean): void {
    const n = e.count ?? 1;
    if (daily) {
      const dk = `${e.accountId}\u0001${e.day}\u0001${e.bucket}`;
      let row = this.daily.get(dk);
      if (!row) {
        row = { accountId: e.accountId, day: e.day, bucket: e.bucket, ...zeroCounts() };
        this.daily.set(dk, row);
      }
      countInto(row, e.status, n);
    }
    const bin = latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0);
    const all = allKey(e);
    const hour = e.ts.slice(0, 13);
    const group = `${e.accountId}\u0001${e.day}\u0001${hour}\u0001${all}`;
    const cells = this.groups.get(group) ?? this.cellsOf(e.accountId, [e.day, hour], all, group);
    for (const c of cells) countCell(c, e.status, bin, n);
    for (const miss of missesOf(e)) {
      const mk = `${e.accountId}\u0001${e.day}\u0001${miss}`;
      const m = this.misses.get(mk);
      if (m) m.n += n;
      else this.misses.set(mk, { account: e.accountId, day: e.day, miss, n });
    }
  }
}

export interface EmbeddedUsageOptions {
  /**
   * USAGE_DURABILITY=strict: each batch's transaction is on disk (synchronous=FULL for it)
   * before its append resolves; else a commit survives a crash of the process, and a power
   * loss may take the last ones (WAL, synchronous=NORMAL)
   */
  durable?: boolean;
  /** import an old DATA_DIR's events/ day files at open (see usage-import.ts) */
  importFrom?: string;
  /**
   * where appends, prune and rebuildDaily write: `worker` (the default for a database file) a
   * thread with its own connection (usage-thread.ts), so a batch's transaction never blocks the
   * request thread; `inline` the store's connection, on the calling thread
   */
  writer?: "worker" | "inline";
  /** the write thread's script (tests; default: usage-worker beside this module) */
  workerUrl?: URL;
}

/** Embedded usage event store on the embedded store's SQLite database (see the top of the file). */
export class EmbeddedUsageStore implements UsageEventStore {
  /** the store opened its own database (open()) and closes it */
  private owned = false;
  private readonly durable: boolean;
  /** the write thread (null: writes run on this store's connection) */
  readonly thread: UsageThread | null;

  constructor(
    readonly db: Database,
    opts: EmbeddedUsageOptions = {},
  ) {
    this.durable = opts.durable === true;
    db.db.function("usage_hist_add", { deterministic: true }, histAdd);
    db.exec(SCHEMA);
    this.migrateCells();
    if (opts.importFrom) importLegacyUsage(this, opts.importFrom);
    this.thread =
      (opts.writer ?? "worker") === "worker" && db.path !== ":memory:"
        ? new UsageThread(db.path, this.durable, opts.workerUrl)
        : null;
  }

  /**
   * Run a write on the thread; inline when it is unavailable (could not start). A thread that
   * died mid-write is replaced and the write sent once more: a write that had committed is
   * found again by its ids and not counted twice.
   */
  private async onThread<T>(
    post: (t: UsageThread) => Promise<T>,
    inline: () => T | Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; this.thread && !this.thread.unavailable; attempt++) {
      try {
        return await post(this.thread);
      } catch (err) {
        if (!(err instanceof UsageThreadDied) || (attempt > 0 && !this.thread.unavailable))
          throw err;
      }
    }
    return inline();
  }

  /** A store on its own database file under `dataDir` (tests, scripts), old events imported. */
  static open(dataDir: string, opts: Omit<EmbeddedUsageOptions, "importFrom"> = {}) {
    const store = new EmbeddedUsageStore(new Database(join(dataDir, DB_FILE)), {
      ...opts,
      importFrom: dataDir,
    });
    store.owned = true;
    return store;
  }

  /** events in the log */
  get size(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM usage_events")?.n ?? 0;
  }

  /**
   * `fresh` events come from eventOf, already in the stored field order; others (retries, spill
   * replays) are put in it (usageEvent). A repeated id is found by the primary key either way.
   */
  async append(events: UsageEvent[], opts: { fresh?: boolean } = {}): Promise<number> {
    if (events.length === 0) return 0;
    let fresh = opts.fresh === true;
    return this.onThread(
      (t) => {
        const sent = t.append(events, fresh ? stringify : storedLine, fresh);
        // a resend after the thread died is not fresh: its events may be stored already
        fresh = false;
        return sent;
      },
      () => this.ingest(events, { fresh: opts.fresh }),
    );
  }

  /**
   * Store events and count the ones not stored before into the projections, in one
   * transaction; `daily: false` leaves usage_daily alone (the import of days whose rows were
   * archived). Returns how many were new.
   */
  ingest(events: readonly UsageEvent[], opts: { daily?: boolean; fresh?: boolean } = {}): number {
    if (events.length === 0) return 0;
    const stored = opts.fresh ? events : events.map(storedOrder);
    return this.store(
      stored,
      stored.map((e) => JSON.stringify(e)),
      opts.daily ?? true,
    );
  }

  /**
   * ingest for events as the JSON lines usage_events stores (encodeLines; the write thread):
   * each line is stored as it is. Not `fresh`: lines whose events are not in the stored field
   * order are re-serialized in it.
   */
  ingestLines(lines: readonly string[], opts: { fresh?: boolean } = {}): number {
    const events = lines.map((l) => JSON.parse(l) as UsageEvent);
    if (opts.fresh) return this.store(events, lines, true);
    const stored = events.map(storedOrder);
    return this.store(
      stored,
      stored.map((e) => JSON.stringify(e)),
      true,
    );
  }

  /** Insert events (`texts[i]` is events[i] as stored) and count the new ones, in one transaction. */
  private store(events: readonly UsageEvent[], texts: readonly string[], daily: boolean): number {
    if (events.length === 0) return 0;
    return this.db.tx(() => {
      const insert = this.db.stmt(
        "INSERT OR IGNORE INTO usage_events (id, account, day, ts, e) VALUES (?, ?, ?, ?, ?)",
      );
      const slots = new BrandSlots(this.db);
      slots.preload(
        events.flatMap((e): [string, string][] => [
          [e.accountId, e.day],
          [e.accountId, e.ts.slice(0, 13)],
        ]),
      );
      const delta = new Delta(slots);
      let stored = 0;
      for (let i = 0; i < events.length; i++) {
        const e = events[i] as UsageEvent;
        const r = insert.run(
          e.id,
          e.accountId,
          dayNumber(e.day) || 0,
          // an unreadable ts (only a hand-made event has one) sorts first rather than failing
          // the whole batch
          Date.parse(e.ts) || 0,
          texts[i] as string,
        );
        if (r.changes === 0) continue;
        stored++;
        delta.add(e, daily);
      }
      this.write(delta);
      return stored;
    }, this.durable);
  }

  /** Upsert a delta's rows (inside the caller's transaction). */
  private write(delta: Delta): void {
    const daily = this.db.stmt(
      `INSERT INTO usage_daily (account, day, bucket, requests, errors, rate_limited)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
         requests = requests + excluded.requests, errors = errors + excluded.errors,
         rate_limited = rate_limited + excluded.rate_limited`,
    );
    for (const r of delta.daily.values())
      daily.run(r.accountId, r.day, r.bucket, r.requests, r.errors, r.rateLimited);
    const cell = this.db.stmt(
      `INSERT INTO usage_cells (account, view, period, key, n, e, r, h)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
         n = n + excluded.n, e = e + excluded.e, r = r + excluded.r,
         h = usage_hist_add(h, excluded.h)`,
    );
    for (const { account, view, period, key, c } of delta.cells.values())
      cell.run(account, view, period, key, c.n, c.e, c.r, histBlob(c.h));
    const miss = this.db.stmt(
      `INSERT INTO usage_misses (account, day, miss, n) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
    for (const m of delta.misses.values()) miss.run(m.account, m.day, m.miss, m.n);
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    return this.db
      .all<{
        day: string;
        bucket: DailyRow["bucket"];
        requests: number;
        errors: number;
        rl: number;
      }>(
        `SELECT day, bucket, requests, errors, rate_limited AS rl FROM usage_daily
         WHERE day IN (SELECT value FROM json_each(?)) AND account = ? ORDER BY day, bucket`,
        periodList(from, to, false),
        accountId,
      )
      .map((r) => ({
        accountId,
        day: r.day,
        bucket: r.bucket,
        requests: r.requests,
        errors: r.errors,
        rateLimited: r.rl,
      }));
  }

  /**
   * The WHERE clause of a read of one account's view over a list of periods (?1 view, ?2 the
   * periods, ?3 account; `extra` binds ?4, ?5) and the JS filter the rows still need: a keys hint
   * reads just those keys of each period (a seek each); a brand hint of a rollup led by the
   * brand seeks the brand's keys of each period; a key hint on `all` leaves other keys' rows
   * in SQLite.
   */
  private cellWhere(view: View, hint?: CellHint) {
    const where = "view = ?1 AND period IN (SELECT value FROM json_each(?2)) AND account = ?3";
    if (hint?.keys !== undefined) {
      // bound one by one, so each period seeks each key (SQLite does not seek the keys of a
      // json_each list); the list padded to a power of two with its last key, so few
      // statements are prepared
      const keys = hint.keys.length > 0 ? hint.keys : [""];
      const slots = 2 ** Math.ceil(Math.log2(keys.length));
      const extra = Array.from(
        { length: slots },
        (_, i) => keys[Math.min(i, keys.length - 1)] as string,
      );
      const params = extra.map((_, i) => `?${i + 4}`).join(", ");
      return { sql: `${where} AND key IN (${params})`, extra, keep: null };
    }
    const use = hint?.brand !== undefined ? BRAND_VIEWS.has(view) : view.endsWith(".all");
    const keep = use ? hintFilter(hint) : null;
    const needle = use ? hintNeedle(hint) : null;
    if (needle && "prefix" in needle)
      return {
        sql: `${where} AND key >= ?4 AND key < ?5`,
        extra: [needle.prefix, `${needle.prefix}\x7f`],
        keep,
      };
    if (needle && "inner" in needle)
      return { sql: `${where} AND instr(key, ?4) > 0`, extra: [needle.inner], keep };
    return { sql: where, extra: [] as string[], keep };
  }

  /**
   * The rows of a read of one account's view over the periods from..to, as arrays (no object
   * made per row): ?1 the view, ?2 the periods, ?3 the account, then `extra`.
   */
  private rowsOf<T>(
    sql: string,
    [accountId, view, from, to]: [string, View, string, string],
    extra: string[] = [],
  ): T[] {
    const select = this.db.stmt(sql);
    select.setReturnArrays(true);
    return select.all(
      VIEW_NO.get(view) ?? -1,
      periodList(from, to, view.startsWith("hour.")),
      accountId,
      ...extra,
    ) as unknown as T[];
  }

  async cells(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    if (hint?.summed) return this.summedCells(accountId, view, from, to);
    const { sql, extra, keep } = this.cellWhere(view, hint);
    const out: PeriodRow[] = [];
    let t = "";
    let cells: PeriodCells = new Map();
    const rows = this.rowsOf<[string, string, number, number, number, Uint8Array]>(
      `SELECT period, key, n, e, r, h FROM usage_cells WHERE ${sql} ORDER BY period`,
      [accountId, view, from, to],
      extra,
    );
    for (const [period, key, n, e, r, h] of rows) {
      if (keep && !keep(key)) continue;
      if (out.length === 0 || t !== period) {
        t = period;
        cells = new Map();
        out.push({ t, cells });
      }
      cells.set(key, { n, e, r, h: histOf(h) });
    }
    return out;
  }

  /**
   * Each period's cells summed by SQLite into one cell (key ""): the counts by sum(), the
   * histograms' BLOBs concatenated (one row per period, not per cell), their pairs added here.
   */
  private summedCells(accountId: string, view: View, from: string, to: string): PeriodRow[] {
    const rows = this.rowsOf<[string, number, number, number, Uint8Array]>(
      `SELECT period, sum(n), sum(e), sum(r), CAST(group_concat(h, '') AS BLOB) FROM usage_cells
       WHERE ${this.cellWhere(view).sql} GROUP BY period ORDER BY period`,
      [accountId, view, from, to],
    );
    const bins = new Float64Array(LAT_BINS);
    return rows.map(([t, n, e, r, blob]) => {
      bins.fill(0);
      // the (bin, requests) uint32 pairs read straight off the BLOB (bins < 256: one byte)
      for (let i = 0; i + 8 <= blob.byteLength; i += 8)
        bins[blob[i] as number] =
          (bins[blob[i] as number] as number) +
          (((blob[i + 4] as number) |
            ((blob[i + 5] as number) << 8) |
            ((blob[i + 6] as number) << 16) |
            ((blob[i + 7] as number) << 24)) >>>
            0);
      const h: number[] = [];
      for (let bin = 0; bin < LAT_BINS; bin++) if (bins[bin]) h.push(bin, bins[bin] as number);
      return { t, cells: new Map([["", { n, e, r, h }]]) };
    });
  }

  /** Requests and cells per cell key over the periods, counted by SQLite: no histogram read. */
  async cellCounts(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<Map<string, KeyCount>> {
    const { sql, extra, keep } = this.cellWhere(view, hint);
    const rows = this.rowsOf<[string, number, number]>(
      `SELECT key, sum(n), count(*) FROM usage_cells WHERE ${sql} GROUP BY key`,
      [accountId, view, from, to],
      extra,
    );
    const out = new Map<string, KeyCount>();
    for (const [key, n, cells] of rows) if (!keep || keep(key)) out.set(key, { n, cells });
    return out;
  }

  async misses(accountId: string | null, from: string, to: string): Promise<Map<string, number>> {
    const rows =
      accountId === null
        ? this.db.all<{ miss: string; n: number }>(
            "SELECT miss, sum(n) AS n FROM usage_misses WHERE day BETWEEN ? AND ? GROUP BY miss",
            from,
            to,
          )
        : this.db.all<{ miss: string; n: number }>(
            `SELECT miss, sum(n) AS n FROM usage_misses
             WHERE day IN (SELECT value FROM json_each(?)) AND account = ? GROUP BY miss`,
            periodList(from, to, false),
            accountId,
          );
    return new Map(rows.map((r) => [r.miss, r.n]));
  }

  /** Export page: the whole page read out of exportStream. */
  async exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]> {
    const out: UsageEvent[] = [];
    const page = await this.exportStream(accountId, q);
    const decoder = new TextDecoder();
    for (let chunk = await page.next(); chunk; chunk = await page.next())
      for (const l of decoder.decode(chunk).split("\n")) if (l) out.push(JSON.parse(l));
    return out;
  }

  /**
   * Export page: its size and last id by the (account, id) index, then its
   * lines CHUNK_ROWS at a time, each chunk one query resuming after the last id sent (no
   * statement stays open between chunks, so a stream never read to the end holds nothing).
   */
  async exportStream(accountId: string, q: ExportQuery): Promise<ExportStream> {
    const where = `account = ? AND id > ? AND day BETWEEN ? AND ? AND ts < ?`;
    const lo = dayNumber(q.from);
    const hi = dayNumber(q.to);
    const before = Date.parse(q.before);
    const head = this.db.get<{ n: number; last: string | null }>(
      `SELECT count(*) AS n, max(id) AS last FROM
         (SELECT id FROM usage_events WHERE ${where} ORDER BY id LIMIT ?)`,
      accountId,
      q.after ?? "",
      lo,
      hi,
      before,
      Math.max(0, q.limit),
    );
    const events = head?.n ?? 0;
    const last = head?.last ?? null;
    let after = q.after ?? "";
    let left = events;
    const encoder = new TextEncoder();
    const db = this.db;
    return {
      events,
      last,
      async next() {
        if (left <= 0 || last === null) return null;
        const rows = db.all<{ id: string; e: string }>(
          `SELECT id, e FROM usage_events WHERE ${where} AND id <= ? ORDER BY id LIMIT ?`,
          accountId,
          after,
          lo,
          hi,
          before,
          last,
          Math.min(left, CHUNK_ROWS),
        );
        if (rows.length === 0) {
          left = 0;
          return null;
        }
        left -= rows.length;
        after = (rows[rows.length - 1] as { id: string }).id;
        let text = "";
        for (const r of rows) text += `${r.e}\n`;
        return encoder.encode(text);
      },
      close() {
        left = 0;
      },
    };
  }

  /** The day's events counted by account, key, bucket and status, from the day.k cells. */
  tallyOfDay(day: string): CountableEvent[] {
    const rows = this.db.all<{ account: string; key: string; n: number }>(
      "SELECT account, key, n FROM usage_cells WHERE period = ? AND view = ?",
      day,
      DAY_K,
    );
    return rows.map((r) => {
      const g = groupOf("k", r.key);
      return {
        day,
        accountId: r.account,
        keyId: g.key ?? "",
        bucket: g.bucket as CountableEvent["bucket"],
        status: g.status as number,
        events: r.n,
      };
    });
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    const n = dayNumber(day);
    // in append order: the (day) index holds each day's rows by rowid
    let after = 0;
    for (;;) {
      const rows = this.db.all<{ r: number; e: string }>(
        "SELECT rowid AS r, e FROM usage_events WHERE day = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        n,
        after,
        CHUNK_ROWS,
      );
      if (rows.length === 0) return;
      after = (rows[rows.length - 1] as { r: number }).r;
      for (const r of rows) yield JSON.parse(r.e) as UsageEvent;
    }
  }

  /** days that have events in the log, oldest first (optionally only those before `before`) */
  private days(before = Number.POSITIVE_INFINITY): number[] {
    return this.db
      .all<{ day: number }>(
        "SELECT DISTINCT day FROM usage_events WHERE day < ? ORDER BY day",
        Number.isFinite(before) ? before : 1e9,
      )
      .map((r) => r.day);
  }

  /**
   * Each day with events: its usage_daily rows, cells (day and hours) and misses recomputed from
   * its events in one transaction; rows of days without events (pruned) are kept.
   */
  async rebuildDaily(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; rows: number }> {
    return this.onThread(
      (t) => t.request({ op: "rebuild" }, progress),
      () => this.rebuildHere(progress),
    );
  }

  /** rebuildDaily on this store's connection */
  private async rebuildHere(progress?: (p: { day: string; events: number }) => void) {
    let total = 0;
    for (const n of this.days()) {
      const day = dayOfNumber(n);
      const events = this.rebuildDay(n);
      total += events;
      progress?.({ day, events });
      // appends and reads run between days
      await new Promise((r) => setImmediate(r));
    }
    const rows = this.db.get<{ n: number }>("SELECT count(*) AS n FROM usage_daily")?.n ?? 0;
    return { events: total, rows };
  }

  /**
   * Day number `n`'s usage_daily rows, cells and misses recomputed from its events, in one
   * transaction; the brands its periods keep (usage_brands) stay, and brands not in them are
   * admitted while the periods have room. Returns the day's events.
   */
  private rebuildDay(n: number): number {
    const day = dayOfNumber(n);
    const slots = new BrandSlots(this.db);
    return this.db.tx(() => {
      this.db.run("DELETE FROM usage_daily WHERE day = ?", day);
      for (let v = 0; v < VIEWS.length; v++)
        this.db.run(
          "DELETE FROM usage_cells WHERE view = ? AND period >= ? AND period < ?",
          v,
          day,
          `${day}U`,
        );
      this.db.run("DELETE FROM usage_misses WHERE day = ?", day);
      const delta = new Delta(slots);
      let count = 0;
      // in append order: brands are admitted as the live writes admitted them
      for (const { e } of this.db
        .stmt("SELECT e FROM usage_events WHERE day = ? ORDER BY rowid")
        .iterate(n)) {
        delta.add(JSON.parse(e as string) as UsageEvent, true);
        count++;
      }
      this.write(delta);
      return count;
    });
  }

  /**
   * A database whose usage_cells have an older layout (usage_meta `cells` below CELLS_VERSION:
   * no brand bound, the `all` key led by the bucket) is migrated once, at open, before any write:
   * the `all` cells' keys are put in the present field order (so days no longer in the log keep
   * their counts), then every day in the log is rebuilt (brands bounded); the version is written
   * last. It may take minutes for a large log; an interrupted migration runs again at the next
   * open (keys already in the present order stay as they are, a rebuild is idempotent).
   */
  private migrateCells(): void {
    const v = this.db.get<{ value: number }>("SELECT value FROM usage_meta WHERE name = 'cells'");
    if (v?.value === CELLS_VERSION) return;
    const had = this.db.get<{ n: number }>("SELECT 1 AS n FROM usage_cells LIMIT 1") !== undefined;
    if (had) {
      const started = Date.now();
      this.db.tx(() => {
        const views = JSON.stringify(ALL_VIEWS);
        this.db.exec("DROP TABLE IF EXISTS temp.usage_cells_old");
        this.db.run(
          "CREATE TEMP TABLE usage_cells_old AS SELECT * FROM usage_cells WHERE view IN (SELECT value FROM json_each(?))",
          views,
        );
        this.db.run(
          "DELETE FROM usage_cells WHERE view IN (SELECT value FROM json_each(?))",
          views,
        );
        const put = this.db.stmt(
          "INSERT INTO usage_cells (view, period, account, key, n, e, r, h) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        );
        for (const row of this.db.stmt("SELECT * FROM temp.usage_cells_old").iterate()) {
          const o = row as Record<string, unknown>;
          put.run(
            o.view as number,
            o.period as string,
            o.account as string,
            presentAllKey(o.key as string),
            o.n as number,
            o.e as number,
            o.r as number,
            o.h as Uint8Array,
          );
        }
        this.db.exec("DROP TABLE temp.usage_cells_old");
      });
      let events = 0;
      for (const n of this.days()) events += this.rebuildDay(n);
      log("info", "usage analytics cells migrated to bounded brands", {
        events,
        ms: Date.now() - started,
      });
    }
    this.db.run(
      "INSERT INTO usage_meta (name, value) VALUES ('cells', ?) ON CONFLICT DO UPDATE SET value = excluded.value",
      CELLS_VERSION,
    );
  }

  /** Retention: the events of each day before `beforeDay` deleted, a day per transaction. */
  async prune(beforeDay: string): Promise<{ days: number; events: number }> {
    return this.onThread(
      (t) => t.request({ op: "prune", beforeDay }),
      () => this.pruneHere(beforeDay),
    );
  }

  /** prune on this store's connection */
  private async pruneHere(beforeDay: string) {
    let days = 0;
    let events = 0;
    for (const n of this.days(dayNumber(beforeDay))) {
      events += this.db.tx(() => {
        // the brands its periods kept: only a write into the day would need them
        this.db.run(
          "DELETE FROM usage_brands WHERE period >= ? AND period < ?",
          dayOfNumber(n),
          `${dayOfNumber(n)}U`,
        );
        return Number(this.db.run("DELETE FROM usage_events WHERE day = ?", n).changes);
      });
      days++;
      await new Promise((r) => setImmediate(r));
    }
    return { days, events };
  }

  async close() {
    await this.thread?.close();
    if (this.owned) this.db.close();
  }
}

/** An event in the stored field order (a retry, a replay: see usageEvent). */
const storedOrder = (e: UsageEvent): UsageEvent => usageEvent(e.id, e.ts, e.day, e);

const stringify = (e: UsageEvent): string => JSON.stringify(e);
/** an event as the JSON line usage_events stores (put in the stored field order) */
const storedLine = (e: UsageEvent): string => JSON.stringify(storedOrder(e));
