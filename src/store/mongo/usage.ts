import { type AnyBulkWriteOperation, type Db, MongoBulkWriteError } from "mongodb";
import { newId } from "../../platform/ids";
import { log } from "../../platform/log";
import {
  type Cell,
  CellProjection,
  missKey,
  missOf,
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
 * A document of one writer's analytics cells of one account, view and period (`g` the view,
 * e.g. "day.bs"; `t` the period: YYYY-MM-DD or YYYY-MM-DDTHH), or of its miss counts of one day
 * (`g` "miss"). `_id` is "accountId|g|t|writer" (a rebuild writes one without a writer). Each
 * view has its own collection (`cellsCollection`): FerretDB v1 (SQLite) pushes no filter but
 * one on `_id` down, so a query scans its collection, and that is only its view's documents.
 */
interface CellDoc {
  _id: string;
  accountId: string;
  g: View | "miss";
  t: string;
  writer?: string;
  /** cell key → cell (views) */
  c?: Record<string, StoredCell>;
  /** miss → count (g miss) */
  m?: Record<string, number>;
}

/** A cell as stored: its histogram an object bin → requests (so that `$inc` can add to it). */
interface StoredCell {
  n?: number;
  e?: number;
  r?: number;
  h?: Record<string, number>;
}

/** The collection of a view's documents (usage_cells_day_bs, ...) or of the misses. */
const cellsCollection = (g: CellDoc["g"]) =>
  g === "miss" ? "usage_misses" : `usage_cells_${g.replace(".", "_")}`;

const cellDocId = (accountId: string, g: string, t: string, writer?: string) =>
  `${accountId}|${g}|${t}${writer ? `|${writer}` : ""}`;

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
  /** this process's rows in usage_daily */
  private readonly writer = newId();

  constructor(private db: Db) {}

  private get events() {
    return this.db.collection<EventDoc>("usage_events");
  }
  private get dailyCol() {
    return this.db.collection<DailyDoc>("usage_daily");
  }
  private cellsCol(g: CellDoc["g"]) {
    return this.db.collection<CellDoc>(cellsCollection(g));
  }

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "usage_events", [
      { key: { day: 1 }, name: "day" },
      { key: { accountId: 1, _id: 1 }, name: "account_id" },
    ]);
    for (const view of VIEWS)
      await ensureIndexes(db, cellsCollection(view), [
        { key: { accountId: 1, t: 1 }, name: "account_t" },
      ]);
    await ensureIndexes(db, cellsCollection("miss"), [
      { key: { accountId: 1, t: 1 }, name: "account_t" },
      { key: { t: 1 }, name: "t" },
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

  async cells(accountId: string, view: View, from: string, to: string): Promise<PeriodRow[]> {
    const docs = await this.cellsCol(view)
      .find({ accountId, t: { $gte: from, $lte: to } }, { projection: { t: 1, c: 1 } })
      .toArray();
    return docs.map((d) => ({ t: d.t, cells: new Map(Object.entries(d.c ?? {}).map(fillCell)) }));
  }

  async misses(accountId: string | null, from: string, to: string) {
    const filter = accountId === null ? {} : { accountId };
    const out = new Map<string, number>();
    const cursor = this.cellsCol("miss").find(
      { ...filter, t: { $gte: from, $lte: to } },
      { projection: { m: 1 } },
    );
    for await (const d of cursor)
      for (const [k, n] of Object.entries(d.m ?? {})) {
        const miss = missOf(k);
        out.set(miss, (out.get(miss) ?? 0) + n);
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
   * common subset of MongoDB and FerretDB has no `$cond` in `$group`, nor `$out`), then every
   * row is written with its absolute counts and rows without events are deleted. Only the days
   * still in the log are recomputed: rows of days whose raw events were pruned stay as they are.
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
    const all = [...rows.entries()];
    for (let i = 0; i < all.length; i += 1000)
      await this.dailyCol.bulkWrite(
        all.slice(i, i + 1000).map(([_id, row]) => ({
          replaceOne: { filter: { _id }, replacement: row, upsert: true },
        })),
        { ordered: false },
      );
    const stale: string[] = [];
    const kept = oldest === null ? {} : { day: { $gte: oldest } };
    for await (const d of this.dailyCol.find(kept, { projection: { _id: 1 } }))
      if (!rows.has(d._id)) stale.push(d._id);
    for (let i = 0; i < stale.length; i += 1000)
      await this.dailyCol.deleteMany({ _id: { $in: stale.slice(i, i + 1000) } });
    await this.rebuildCells(cells, oldest);
    if (progress && events % 100_000 !== 0) progress({ day: oldest ?? "", events });
    return { events, rows: rows.size };
  }

  async close() {}

  /**
   * Replace the analytics documents from a rebuilt projection: every document of the periods still in the
   * log (writers' rows included) is deleted, then one document per account, view and period is
   * inserted (no writer). Documents of pruned days stay as they are. (Deleting first: FerretDB
   * v1 stalls on bulk replaces of some existing documents.)
   */
  private async rebuildCells(cells: CellProjection, oldest: string | null) {
    if (oldest === null) return;
    for (const g of [...VIEWS, "miss" as const])
      await this.cellsCol(g).deleteMany({ t: { $gte: oldest } });
    await this.writeCells(cells);
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
   * Fold cells into their view's collection: with a writer, one `$inc` update per account, view and period
   * (each process has its own documents, as in usage_daily); without (a rebuild, after the
   * documents were deleted), whole documents are inserted.
   */
  private async writeCells(cells: CellProjection, writer?: string) {
    const ops = new Map<CellDoc["g"], AnyBulkWriteOperation<CellDoc>[]>();
    const put = (accountId: string, g: CellDoc["g"], t: string, inc: Record<string, number>) => {
      let list = ops.get(g);
      if (!list) {
        list = [];
        ops.set(g, list);
      }
      const _id = cellDocId(accountId, g, t, writer);
      if (writer)
        list.push({
          updateOne: {
            filter: { _id },
            update: { $setOnInsert: { accountId, g, t, writer }, $inc: inc },
            upsert: true,
          },
        });
      else {
        const doc: CellDoc = { _id, accountId, g, t };
        for (const [path, n] of Object.entries(inc)) setPath(doc, path, n);
        list.push({ insertOne: { document: doc } });
      }
    };
    for (const [accountId, a] of cells.accounts) {
      for (const [view, periods] of a.views)
        for (const [t, period] of periods) {
          const inc: Record<string, number> = {};
          for (const [key, c] of period) {
            inc[`c.${key}.n`] = c.n;
            if (c.e) inc[`c.${key}.e`] = c.e;
            if (c.r) inc[`c.${key}.r`] = c.r;
            for (let i = 0; i < c.h.length; i += 2)
              inc[`c.${key}.h.${c.h[i]}`] = c.h[i + 1] as number;
          }
          put(accountId, view, t, inc);
        }
      for (const [day, misses] of a.misses) {
        const inc: Record<string, number> = {};
        for (const [miss, n] of misses) inc[`m.${missKey(miss)}`] = n;
        put(accountId, "miss", day, inc);
      }
    }
    // one collection per view: their writes touch different documents and go in parallel
    await Promise.all(
      [...ops].map(async ([g, list]) => {
        for (let i = 0; i < list.length; i += 1000)
          await this.cellsCol(g).bulkWrite(list.slice(i, i + 1000), { ordered: false });
      }),
    );
  }
}

/** A stored cell (its histogram an object bin → requests, for `$inc`) as a Cell. */
function fillCell([key, c]: [string, StoredCell]): [string, Cell] {
  const h: number[] = [];
  for (const bin in c.h) h.push(Number(bin), c.h[bin] as number);
  // fields a writer never incremented are zero
  return [key, { n: c.n ?? 0, e: c.e ?? 0, r: c.r ?? 0, h }];
}

/** Set a dotted path ("c.key.h.3") in a plain object. */
function setPath(doc: object, path: string, value: number) {
  const parts = path.split(".");
  let o = doc as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) {
    o[p] ??= {};
    o = o[p] as Record<string, unknown>;
  }
  o[parts[parts.length - 1] as string] = value;
}
