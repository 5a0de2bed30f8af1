import { type AnyBulkWriteOperation, type Db, MongoBulkWriteError } from "mongodb";
import { newId } from "../../platform/ids";
import { log } from "../../platform/log";
import {
  type Cell,
  type CellHint,
  CellProjection,
  hintFilter,
  type PeriodCells,
  type PeriodRow,
  VIEWS,
  type View,
} from "../../usage/analytics/cells";
import { countInto, zeroCounts } from "../../usage/daily";
import type {
  DailyCounts,
  DailyRow,
  ExportQuery,
  UsageEvent,
  UsageEventStore,
} from "../../usage/port";
import { DUPLICATE_KEY } from "./errors";
import { ensureIndexes } from "./indexes";

type EventDoc = UsageEvent & { _id: string };
/**
 * A usage_daily row: the counts one writer folded for an account, day and bucket. `_id` is
 * "accountId|day|bucket|writer" (see dailyId); a rebuild writes one row without a writer.
 */
type DailyDoc = DailyRow & { _id: string; writer?: string };

/**
 * The usage_daily key of an account, day and bucket. A string `_id` makes the projection's
 * upserts point writes on MongoDB and on FerretDB (whose SQLite backend pushes down only a
 * filter on a string `_id`).
 */
const dailyId = (r: { accountId: string; day: string; bucket: string }, writer?: string) =>
  `${r.accountId}|${r.day}|${r.bucket}${writer ? `|${writer}` : ""}`;

/**
 * A document of one writer's analytics cells of one account and view over a stretch of periods
 * (`p`: a third of a month, "YYYY-MM-1|2|3"; see docPeriod), or of its miss counts. `_id` is "accountId|p|writer". The cells are
 * one JSON text (`c`: period → cell key → [requests, errors, rateLimited, bin, n, bin, n, ...];
 * misses: day → miss → count), rewritten whole by its one writer, which keeps its documents in
 * memory (`v` changes at every write, so a document changed by a rebuild meanwhile is noticed).
 * FerretDB v1 (SQLite) pushes only an `_id` equality down and rebuilds every other document of
 * the collection from JSON for any other filter, at a cost per document more than per byte:
 * one view per collection, few documents (37 per account, writer and year, whatever the
 * view), one string field each instead of thousands of nested numbers.
 */
interface CellDoc {
  _id: string;
  accountId: string;
  p: string;
  w: string;
  /** a new id at every write */
  v: string;
  c: string;
}

/** A period's cells as stored: cell key → [n, e, r, bin, count, ...]. */
type StoredPeriod = Record<string, number[]>;
/** A document's content: period → cells, or day → miss → count. */
type StoredDoc = Record<string, StoredPeriod | Record<string, number>>;

type CellGroupName = View | "miss";

/** The collection of a view's documents (usage_view_day_bs, ...) or of the misses. */
const cellsCollection = (g: CellGroupName) => `usage_view_${g.replace(".", "_")}`;

/** The document period of a day or hour: a third of its month. */
function docPeriod(t: string): string {
  const d = Number(t.slice(8, 10));
  return `${t.slice(0, 7)}-${d <= 10 ? 1 : d <= 20 ? 2 : 3}`;
}

/** Cells of a period in the stored form. */
function storedPeriod(cells: PeriodCells): StoredPeriod {
  const out: StoredPeriod = {};
  for (const [key, c] of cells) out[key] = [c.n, c.e, c.r, ...c.h];
  return out;
}

/** Add stored cells or miss counts `from` into `into` (same shape). */
function mergeStored(into: StoredDoc, from: StoredDoc): void {
  for (const t in from) {
    const src = from[t] as Record<string, number[] | number>;
    into[t] ??= {};
    const dst = into[t] as Record<string, number[] | number>;
    for (const k in src) {
      const v = src[k] as number[] | number;
      const had = dst[k];
      if (typeof v === "number") dst[k] = ((had as number | undefined) ?? 0) + v;
      else if (!had) dst[k] = [...v];
      else addStoredCell(had as number[], v);
    }
  }
}

function addStoredCell(into: number[], c: number[]): void {
  into[0] = (into[0] as number) + (c[0] as number);
  into[1] = (into[1] as number) + (c[1] as number);
  into[2] = (into[2] as number) + (c[2] as number);
  next: for (let i = 3; i < c.length; i += 2) {
    for (let j = 3; j < into.length; j += 2)
      if (into[j] === c[i]) {
        into[j + 1] = (into[j + 1] as number) + (c[i + 1] as number);
        continue next;
      }
    into.push(c[i] as number, c[i + 1] as number);
  }
}

/** A stored cell as a Cell. */
const cellOf = (a: number[]): Cell => ({
  n: a[0] as number,
  e: a[1] as number,
  r: a[2] as number,
  h: a.slice(3),
});

/** documents of its own a writer keeps in memory */
const CACHED_DOCS = 20_000;

/** The unique index of earlier versions (one row per account, day and bucket). */
const OLD_UNIQUE_INDEX = "account_day_bucket";

/**
 * MongoDB usage store.
 *  - `usage_events`: the append-only log. `_id` is the event id (UUIDv7), so the id is unique
 *    and a replayed event is a duplicate-key error that is ignored. Index `day` serves the
 *    per-day reads (counter rebuild).
 *  - `usage_daily`: the projection. Each process folds the events it inserted into rows of its
 *    own (`_id` "accountId|day|bucket|writer", `$inc`, one batch at a time), and `daily()` sums
 *    an account's rows per day and bucket (index `account_day_bucket_rows`). No two instances
 *    ever update one row, so none loses the other's counts where updates are not atomic
 *    (FerretDB v1 reads, then writes: concurrent `$inc`s on one document lose increments).
 */
export class MongoUsageStore implements UsageEventStore {
  /** this process's rows in usage_daily and its analytics documents */
  private readonly writer = newId();
  /** this writer's analytics documents (collection|_id → content and version), oldest first */
  private docs = new Map<string, { v: string; c: StoredDoc }>();
  /** collection|_id of every analytics document this writer created */
  private created = new Set<string>();

  constructor(private db: Db) {}

  private get events() {
    return this.db.collection<EventDoc>("usage_events");
  }
  private get dailyCol() {
    return this.db.collection<DailyDoc>("usage_daily");
  }
  private cellsCol(g: CellGroupName) {
    return this.db.collection<CellDoc>(cellsCollection(g));
  }

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "usage_events", [
      { key: { day: 1 }, name: "day" },
      { key: { accountId: 1, _id: 1 }, name: "account_id" },
    ]);
    for (const view of VIEWS)
      await ensureIndexes(db, cellsCollection(view), [
        { key: { accountId: 1, p: 1 }, name: "account_p" },
      ]);
    await ensureIndexes(db, cellsCollection("miss"), [
      { key: { accountId: 1, p: 1 }, name: "account_p" },
      { key: { p: 1 }, name: "p" },
    ]);
    const daily = db.collection("usage_daily");
    const had = await daily.indexes().catch(() => [] as { name?: string }[]);
    if (had.some((i) => i.name === OLD_UNIQUE_INDEX)) await daily.dropIndex(OLD_UNIQUE_INDEX);
    await ensureIndexes(db, "usage_daily", [
      { key: { accountId: 1, day: 1, bucket: 1 }, name: "account_day_bucket_rows" },
    ]);
  }

  async append(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    let inserted: UsageEvent[] = events;
    let failure: unknown = null;
    try {
      await this.events.insertMany(
        events.map((e) => ({ _id: e.id, ...e })),
        { ordered: false },
      );
    } catch (err) {
      // anything but a bulk write error: nothing is known to be written, the caller retries
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const writeErrors = err.writeErrors
        ? Array.isArray(err.writeErrors)
          ? err.writeErrors
          : [err.writeErrors]
        : [];
      const failed = new Set(writeErrors.map((w) => w.index));
      inserted = events.filter((_, i) => !failed.has(i));
      // duplicates (already stored) are success; any other failure is retried by the caller,
      // and the retry sees the events inserted now as duplicates
      if (writeErrors.some((w) => w.code !== DUPLICATE_KEY) || err.err) failure = err;
    }
    await this.project(inserted);
    if (failure) throw failure;
    return inserted.length;
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    const docs = await this.dailyCol
      .find({ accountId, day: { $gte: from, $lte: to } }, { projection: { _id: 0, writer: 0 } })
      .sort({ day: 1, bucket: 1 })
      .toArray();
    // one row per day and bucket: the sum of every writer's row
    const rows: DailyRow[] = [];
    for (const d of docs) {
      const last = rows[rows.length - 1];
      if (last && last.day === d.day && last.bucket === d.bucket) {
        last.requests += d.requests;
        last.errors += d.errors;
        last.rateLimited += d.rateLimited;
      } else rows.push({ ...d });
    }
    return rows;
  }

  async cells(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    // a brand= or key= read of the `all` rollup makes cells of that brand or key only
    const keep = view.endsWith(".all") ? hintFilter(hint) : null;
    const rows: PeriodRow[] = [];
    for (const [t, stored] of await this.readDocs(view, accountId, from, to)) {
      const cells: PeriodCells = new Map();
      for (const k in stored)
        if (!keep || keep(k)) cells.set(k, cellOf((stored as StoredPeriod)[k] as number[]));
      rows.push({ t, cells });
    }
    return rows;
  }

  async misses(accountId: string | null, from: string, to: string) {
    const out = new Map<string, number>();
    for (const [, misses] of await this.readDocs("miss", accountId, from, to))
      for (const [miss, n] of Object.entries(misses as Record<string, number>))
        out.set(miss, (out.get(miss) ?? 0) + n);
    return out;
  }

  /**
   * The stored periods from..to of one view (or the misses) of an account (or of all: null),
   * one entry per writer's document and period.
   */
  private async readDocs(g: CellGroupName, accountId: string | null, from: string, to: string) {
    const filter = {
      ...(accountId === null ? {} : { accountId }),
      p: { $gte: docPeriod(from), $lte: docPeriod(to) },
    };
    const out: [string, StoredPeriod | Record<string, number>][] = [];
    const cursor = this.cellsCol(g).find(filter, { projection: { c: 1 } });
    for await (const d of cursor) {
      const doc = JSON.parse(d.c) as StoredDoc;
      for (const t in doc) if (t >= from && t <= to) out.push([t, doc[t] as StoredPeriod]);
    }
    return out;
  }

  async exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]> {
    const docs = await this.events
      .find(
        {
          accountId,
          ...(q.after === null ? {} : { _id: { $gt: q.after } }),
          day: { $gte: q.from, $lte: q.to },
          ts: { $lt: q.before },
        },
        { projection: { _id: 0 } },
      )
      .sort({ _id: 1 })
      .limit(q.limit)
      .toArray();
    return docs as UsageEvent[];
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    // unsorted: the port asks for each event once, in no order (a sort of a busy day would
    // have to happen in memory)
    const cursor = this.events.find({ day }, { projection: { _id: 0 } }).batchSize(5000);
    for await (const doc of cursor) yield doc as UsageEvent;
  }

  /** Delete raw events of days before `beforeDay` (retention); their usage_daily rows stay. */
  async prune(beforeDay: string) {
    // usage_daily rows are maintained per batch, so they already hold these days: only the raw
    // events go
    const days = await this.events.distinct("day", { day: { $lt: beforeDay } });
    const r = await this.events.deleteMany({ day: { $lt: beforeDay } });
    return { days: days.length, events: r.deletedCount };
  }

  /**
   * Recompute usage_daily from usage_events: the events are streamed and counted here (the
   * common subset of MongoDB and FerretDB has no `$cond` in `$group`, nor `$out`), then the
   * rows of the days still in the log are replaced by the recomputed ones. Rows of days whose
   * raw events were pruned stay as they are.
   */
  async rebuildDaily(progress?: (p: { day: string; events: number }) => void) {
    const rows = new Map<string, DailyRow>();
    const cells = new CellProjection();
    let events = 0;
    let oldest: string | null = null;
    const cursor = this.events.find({}, { projection: { _id: 0 } }).batchSize(5000);
    for await (const e of cursor) {
      events++;
      cells.add(e);
      if (progress && events % 100_000 === 0) progress({ day: e.day, events });
      if (oldest === null || e.day < oldest) oldest = e.day;
      const _id = dailyId(e);
      let row = rows.get(_id);
      if (!row) {
        row = { accountId: e.accountId, day: e.day, bucket: e.bucket, ...zeroCounts() };
        rows.set(_id, row);
      }
      countInto(row, e.status, e.count ?? 1);
    }
    // every row of the days still in the log goes (writers' included), then the rebuilt rows
    // are inserted: inserts need no read, where FerretDB v1 scans the collection for each upsert
    if (oldest !== null) await this.dailyCol.deleteMany({ day: { $gte: oldest } });
    const all = [...rows.entries()].map(([_id, row]) => ({ _id, ...row }));
    for (let i = 0; i < all.length; i += 5000)
      await this.dailyCol.insertMany(all.slice(i, i + 5000), { ordered: false });
    await this.rebuildCells(cells, oldest);
    if (progress && events % 100_000 !== 0) progress({ day: oldest ?? "", events });
    return { events, rows: rows.size };
  }

  async close() {}

  /**
   * Replace the analytics documents from a rebuilt projection: the periods still in the log
   * (from `oldest` on) are taken out of every document (writers' included; a document left
   * empty is deleted), then the rebuilt cells are inserted as documents of a writer of their
   * own. Periods of pruned days stay as they are.
   */
  private async rebuildCells(cells: CellProjection, oldest: string | null) {
    if (oldest === null) return;
    this.docs.clear();
    this.created.clear();
    for (const g of [...VIEWS, "miss" as const]) {
      const col = this.cellsCol(g);
      const stale: string[] = [];
      for await (const d of col.find({ p: { $gte: docPeriod(oldest) } })) {
        const doc = JSON.parse(d.c) as StoredDoc;
        const kept: StoredDoc = {};
        for (const t in doc) if (t < oldest) kept[t] = doc[t] as StoredPeriod;
        if (Object.keys(kept).length === 0) stale.push(d._id);
        else await col.replaceOne({ _id: d._id }, { ...d, v: newId(), c: JSON.stringify(kept) });
      }
      for (let i = 0; i < stale.length; i += 1000)
        await col.deleteMany({ _id: { $in: stale.slice(i, i + 1000) } });
    }
    await this.writeCells(cells, `rebuild-${newId()}`);
  }

  /**
   * Fold newly inserted events into usage_daily. The events are already safe in the log, so a
   * failure here is logged, not thrown (a retry would skip them as duplicates anyway); the
   * projection is then repaired with `npm run admin -- projections rebuild`.
   */
  private async project(events: UsageEvent[]) {
    if (events.length === 0) return;
    const sums = new Map<string, { row: Omit<DailyRow, keyof DailyCounts>; c: DailyCounts }>();
    for (const e of events) {
      const k = `${e.accountId}\u0000${e.day}\u0000${e.bucket}`;
      let s = sums.get(k);
      if (!s) {
        s = {
          row: { accountId: e.accountId, day: e.day, bucket: e.bucket },
          c: { requests: 0, errors: 0, rateLimited: 0 },
        };
        sums.set(k, s);
      }
      countInto(s.c, e.status, e.count ?? 1);
    }
    const ops: AnyBulkWriteOperation<DailyDoc>[] = [...sums.values()].map(({ row, c }) => ({
      updateOne: {
        filter: { _id: dailyId(row, this.writer) },
        update: {
          $setOnInsert: { ...row, writer: this.writer },
          $inc: { requests: c.requests, errors: c.errors, rateLimited: c.rateLimited },
        },
        upsert: true,
      },
    }));
    try {
      await this.dailyCol.bulkWrite(ops, { ordered: false });
      const delta = new CellProjection();
      delta.addAll(events);
      await this.writeCells(delta, this.writer);
    } catch (err) {
      log("error", "usage projection update failed; run: npm run admin -- projections rebuild", {
        events: events.length,
        error: (err as Error).message,
      });
    }
  }

  /**
   * Fold cells into the documents of `writer` (this process's, or a rebuild's own): each
   * document's new content is its cached one plus the cells, written whole. A document this
   * writer never created is inserted; one it created but no longer caches is read back first.
   * A write that finds the document changed or gone (a rebuild ran meanwhile) is redone from
   * what is stored then.
   */
  private async writeCells(cells: CellProjection, writer: string) {
    const byDoc = new Map<
      CellGroupName,
      Map<string, { accountId: string; p: string; add: StoredDoc }>
    >();
    const put = (g: CellGroupName, accountId: string, t: string, add: StoredDoc[string]) => {
      let docs = byDoc.get(g);
      if (!docs) {
        docs = new Map();
        byDoc.set(g, docs);
      }
      const p = docPeriod(t);
      const _id = `${accountId}|${p}|${writer}`;
      let d = docs.get(_id);
      if (!d) {
        d = { accountId, p, add: {} };
        docs.set(_id, d);
      }
      d.add[t] = add;
    };
    for (const [accountId, a] of cells.accounts) {
      for (const [view, t, period] of cells.viewPeriods(a))
        put(view, accountId, t, storedPeriod(period));
      for (const [day, misses] of a.misses) put("miss", accountId, day, Object.fromEntries(misses));
    }
    // one collection per view: their writes go in parallel
    await Promise.all(
      [...byDoc].map(async ([g, docs]) => {
        const list = [...docs];
        for (let i = 0; i < list.length; i += 500)
          await this.writeDocs(g, writer, list.slice(i, i + 500));
      }),
    );
  }

  private async writeDocs(
    g: CellGroupName,
    w: string,
    list: [string, { accountId: string; p: string; add: StoredDoc }][],
  ) {
    const col = this.cellsCol(g);
    const ops: AnyBulkWriteOperation<CellDoc>[] = [];
    const done: [string, { v: string; c: StoredDoc }][] = [];
    for (const [_id, { accountId, p, add }] of list) {
      const at = `${g}|${_id}`;
      let had = this.docs.get(at);
      if (!had && this.created.has(at)) {
        const d = await col.findOne({ _id });
        had = d ? { v: d.v, c: JSON.parse(d.c) as StoredDoc } : undefined;
      }
      // the cached content is updated in place: a failed write is redone from the stored one
      const c: StoredDoc = had ? had.c : {};
      mergeStored(c, add);
      const v = newId();
      const doc: CellDoc = { _id, accountId, p, w, v, c: JSON.stringify(c) };
      ops.push(
        had
          ? { replaceOne: { filter: { _id, v: had.v }, replacement: doc } }
          : { insertOne: { document: doc } },
      );
      done.push([at, { v, c }]);
    }
    let ok = false;
    try {
      const r = await col.bulkWrite(ops, { ordered: false });
      ok = r.insertedCount + r.matchedCount === ops.length;
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
    }
    for (const [at, d] of done) {
      this.created.add(at);
      this.remember(at, d);
    }
    if (ok) return;
    // some document was changed or removed by someone else: redo each from what is stored
    for (const [_id, { accountId, p, add }] of list) {
      const at = `${g}|${_id}`;
      const mine = this.docs.get(at);
      const d = await col.findOne({ _id });
      if (d && mine && d.v === mine.v) continue; // this one was written
      const c: StoredDoc = d ? (JSON.parse(d.c) as StoredDoc) : {};
      mergeStored(c, add);
      const v = newId();
      const doc: CellDoc = { _id, accountId, p, w, v, c: JSON.stringify(c) };
      if (d) await col.replaceOne({ _id }, doc);
      else await col.insertOne(doc);
      this.remember(at, { v, c });
    }
  }

  /** keep a document of this writer in memory (the least recently written go first) */
  private remember(at: string, d: { v: string; c: StoredDoc }) {
    this.docs.delete(at);
    this.docs.set(at, d);
    if (this.docs.size > CACHED_DOCS) {
      const oldest = this.docs.keys().next().value;
      if (oldest !== undefined) this.docs.delete(oldest);
    }
  }
}
