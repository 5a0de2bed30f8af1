import { type Db, type Filter, MongoBulkWriteError, ObjectId } from "mongodb";
import { newId } from "../../platform/ids";
import { log } from "../../platform/log";
import type { Bucket } from "../../quota/limits";
import {
  addInto,
  allKey,
  BRAND_VIEWS,
  brandOfKey,
  type CellHint,
  hintFilter,
  type KeyCount,
  missesOf,
  type PeriodCells,
  type PeriodRow,
  periodsBetween,
  presentAllKey,
  type View,
} from "../../usage/analytics/cells";
import type {
  DailyRow,
  ExportQuery,
  ExportStream,
  UsageEvent,
  UsageEventStore,
} from "../../usage/port";
import { DUPLICATE_KEY, isDuplicate } from "./errors";
import { isFerretDb } from "./ferret";
import { ensureIndexes } from "./indexes";
import {
  addCounted,
  applyChecked,
  applyMarked,
  type BatchDoc,
  type BrandSlotDoc,
  type Counted,
  cellOfDoc,
  countedOf,
  type DailyDoc,
  type Deltas,
  docOf,
  type EventDoc,
  eventOfDoc,
  type MissDoc,
  markedOps,
  markOthers,
  noDeltas,
  PROJECTION_NAMES,
  PROJECTIONS,
  type Projection,
  type RollupDoc,
  rollupPrefix,
  wholeDoc,
  writeErrorsOf,
} from "./usage-rollups";

/** The unique index usage_daily had in an earlier layout (it would refuse today's documents). */
const OLD_UNIQUE_INDEX = "account_day_bucket";
/** A recovery pass counts events left unprojected for longer than this... */
export const RECOVER_AFTER_MS = 5_000;
/** ...and runs this often (and once at start). */
export const RECOVER_EVERY_MS = 5_000;
/**
 * FerretDB only: how long the projection lease lasts unless its holder renews it (every third of
 * it, while it writes): how long a holder that died holds up every other process's projections.
 */
const LEASE_MS = 10_000;
/** Days of the log a rebuild groups in one aggregation (its documents are held until written). */
const REBUILD_DAYS = 31;
/**
 * The layout of usage_rollups, kept in usage_meta as `cells`: a database whose rollups have
 * another (older) layout is migrated once (migrateCells).
 */
const CELLS_VERSION = 2;
/** Most `_id`s a keys read lists (beyond, it reads the range and keeps the keys). */
const MAX_ID_LIST = 20_000;
/** Events per NDJSON chunk of an export stream. */
const EXPORT_CHUNK = 1000;

type Lease = { _id: string; owner: string; until: number };

export interface MongoUsageOptions {
  /** ms between recovery passes (0: none, and none at start) */
  recoverEveryMs?: number;
  /** FerretDB: ms a projection lease lasts unless its holder renews it (default LEASE_MS) */
  leaseMs?: number;
}

/**
 * MongoDB usage store (docs/mongodb.md).
 *  - `usage_events`: the log, one document per event, `_id` the event id: a replayed event is a
 *    duplicate-key error, ignored. Each stores the batch `b` that first stored it.
 *  - `usage_batches`: the batches not known to be counted yet.
 *  - `usage_rollups`, `usage_daily`, `usage_misses`: one document per cell, changed only by `$inc`
 *    upserts that carry their batch's id as a marker (see usage-rollups.ts), so a batch applied
 *    again (a retry, a recovery pass, two processes at once) is counted once.
 *  - exactly once: `append` records its batch as pending, inserts the events, counts them into
 *    the projections, then removes the pending batch. A process that dies in between leaves it
 *    pending, and the next recovery pass of any process counts its events with the same batch id
 *    (every RECOVER_EVERY_MS, batches older than RECOVER_AFTER_MS, and once at start).
 */
export class MongoUsageStore implements UsageEventStore {
  private readonly owner = newId();
  private ferret: Promise<boolean> | null = null;
  /** FerretDB: this process's projection writes, one after another */
  private queue: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | null = null;
  private pass: Promise<unknown> | null = null;
  private closed = false;
  private readonly leaseMs: number;

  constructor(
    private db: Db,
    opts: MongoUsageOptions = {},
  ) {
    this.leaseMs = opts.leaseMs ?? LEASE_MS;
    const every = opts.recoverEveryMs ?? RECOVER_EVERY_MS;
    if (every > 0) {
      this.timer = setInterval(() => this.recoveryPass(), every);
      this.timer.unref?.();
      setTimeout(() => this.recoveryPass(), 0).unref?.();
    }
  }

  private get events() {
    return this.db.collection<EventDoc>("usage_events");
  }
  private get batches() {
    return this.db.collection<BatchDoc>("usage_batches");
  }
  private get rollups() {
    return this.db.collection<RollupDoc>(PROJECTIONS.rollups);
  }
  private get brandSlots() {
    return this.db.collection<BrandSlotDoc>("usage_brands");
  }
  private get meta() {
    return this.db.collection<{ _id: string; v: number }>("usage_meta");
  }
  private get dailyDocs() {
    return this.db.collection<DailyDoc>(PROJECTIONS.daily);
  }
  private get missDocs() {
    return this.db.collection<MissDoc>(PROJECTIONS.misses);
  }
  private projection(p: Projection) {
    return this.db.collection<{ _id: string }>(PROJECTIONS[p]);
  }

  /**
   * The indexes (docs/mongodb.md). `retentionDays` (USAGE_RETENTION_DAYS) makes the `ts` index a
   * TTL index that removes events a day after the retention's daily prune would. FerretDB v1 has
   * no TTL indexes: there it is a plain index (`prune` still removes the events).
   */
  static async ensureIndexes(db: Db, opts: { retentionDays?: number } = {}) {
    const ferret = await isFerretDb(db);
    const ttl = ferret ? undefined : opts.retentionDays;
    const expireAfterSeconds = ttl === undefined ? undefined : (ttl + 1) * 86_400;
    await ensureIndexes(db, "usage_events", [
      { key: { day: 1 }, name: "day" },
      { key: { accountId: 1, _id: 1 }, name: "account_id" },
      { key: { b: 1 }, name: "batch" },
      {
        key: { ts: 1 },
        name: "ts",
        ...(expireAfterSeconds === undefined ? {} : { expireAfterSeconds }),
      },
    ]);
    if (expireAfterSeconds !== undefined) {
      const ts = (await db.collection("usage_events").indexes()).find((i) => i.name === "ts");
      if (ts && ts.expireAfterSeconds !== expireAfterSeconds)
        await db.command({ collMod: "usage_events", index: { name: "ts", expireAfterSeconds } });
    }
    await ensureIndexes(db, PROJECTIONS.rollups, [{ key: { a: 1, v: 1, p: 1 }, name: "a_v_p" }]);
    const daily = db.collection(PROJECTIONS.daily);
    const had = await daily.indexes().catch(() => [] as { name?: string }[]);
    if (had.some((i) => i.name === OLD_UNIQUE_INDEX)) await daily.dropIndex(OLD_UNIQUE_INDEX);
    await ensureIndexes(db, PROJECTIONS.daily, [{ key: { a: 1, day: 1 }, name: "a_day" }]);
    await ensureIndexes(db, PROJECTIONS.misses, [
      { key: { a: 1, day: 1 }, name: "a_day" },
      { key: { day: 1 }, name: "day" },
    ]);
  }

  private isFerret(): Promise<boolean> {
    this.ferret ??= isFerretDb(this.db).catch((err) => {
      this.ferret = null;
      throw err;
    });
    return this.ferret;
  }

  /**
   * Run projection writes. MongoDB applies each update to a document atomically: they run at
   * once. FerretDB v1 applies an update as a read, then a write of the whole document, so two
   * writers of one document can lose one's change: there they run one at a time, in this process
   * (a queue) and across processes (a lease document in `usage_locks`, renewed while held).
   */
  private async serialized<T>(fn: () => Promise<T>): Promise<T> {
    if (!(await this.isFerret())) return fn();
    const run = this.queue.then(async () => {
      await this.lease();
      // a holder renews its lease while it writes: only a holder that died (or stalls longer
      // than LEASE_MS) loses it to another process, never one whose projection is merely slow
      const renew = setInterval(() => {
        this.leases
          .updateOne(
            { _id: "projection", owner: this.owner },
            { $set: { until: Date.now() + this.leaseMs } },
          )
          .catch(() => {});
      }, this.leaseMs / 3);
      renew.unref?.();
      try {
        return await fn();
      } finally {
        clearInterval(renew);
        await this.release();
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }

  private get leases() {
    return this.db.collection<Lease>("usage_locks");
  }

  private async lease() {
    for (;;) {
      try {
        await this.leases.insertOne({
          _id: "projection",
          owner: this.owner,
          until: Date.now() + this.leaseMs,
        });
        return;
      } catch (err) {
        if (!isDuplicate(err)) throw err;
      }
      const held = await this.leases.findOne({ _id: "projection" });
      // a holder that died: its lease is removed once it ran out
      if (held && held.until < Date.now())
        await this.leases.deleteOne({ _id: "projection", owner: held.owner, until: held.until });
      else await new Promise((r) => setTimeout(r, 2 + Math.random() * 8));
    }
  }

  private async release() {
    await this.leases.deleteOne({ _id: "projection", owner: this.owner });
  }

  async append(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const b = new ObjectId();
    // the batch is pending before any of its events is stored, and until they are counted
    await this.batches.insertOne({ _id: b });
    let stored = events;
    let again: string[] = [];
    try {
      await this.events.insertMany(
        events.map((e) => docOf(e, b)),
        { ordered: false },
      );
    } catch (err) {
      // nothing is known to be written but duplicates: the caller retries the batch (and a
      // recovery pass counts what this attempt stored)
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const errors = writeErrorsOf(err);
      if (errors.length === 0 || errors.some((w) => w.code !== DUPLICATE_KEY)) throw err;
      const dup = new Set(errors.map((w) => w.index));
      stored = events.filter((_, i) => !dup.has(i));
      again = events.filter((_, i) => dup.has(i)).map((e) => e.id);
    }
    await this.project(b, stored);
    if (again.length > 0) {
      // stored before, by a batch that may still be pending (it failed, or its process died):
      // counted now, as that batch
      const older = batchesOf(
        await this.events.find({ _id: { $in: again } }, { projection: { b: 1 } }).toArray(),
      ).filter((x) => !x.equals(b));
      if (older.length > 0)
        for (const p of await this.batches.find({ _id: { $in: older } }).toArray())
          await this.project(p._id);
    }
    return stored.length;
  }

  /**
   * Count batch `b` into the projections, then remove it from the pending batches. `events`: all
   * of the batch's events when the caller just stored them; else they are read back.
   */
  private project(b: ObjectId, events?: UsageEvent[]): Promise<number> {
    return this.serialized(async () => {
      const list = events ?? (await this.events.find({ b }).toArray()).map((d) => eventOfDoc(d));
      if (list.length > 0) {
        const deltas = noDeltas();
        const counted = list.map(countedOf);
        await markOthers(this.brandSlots, counted, await this.isFerret());
        for (const c of counted) addCounted(deltas, c);
        await this.applyDeltas(deltas, b);
      }
      await this.batches.deleteOne({ _id: b });
      return list.length;
    });
  }

  private async applyDeltas(deltas: Deltas, b: ObjectId) {
    const ferret = await this.isFerret();
    await Promise.all(
      PROJECTION_NAMES.map(async (name) => {
        const d = deltas[name];
        if (d.size === 0) return;
        const col = this.projection(name);
        if (ferret) await applyChecked(col, d, b);
        else await applyMarked(col, markedOps(d, b));
      }),
    );
  }

  /**
   * Count every batch made more than `olderMs` ago that is still pending (its process died or
   * its write failed), each with its own batch id; 0: every pending batch. Resolves to the
   * events counted.
   */
  async recover(olderMs = RECOVER_AFTER_MS): Promise<number> {
    let counted = 0;
    for (;;) {
      // a batch id carries the second it was made in
      const made = Math.floor((Date.now() - olderMs) / 1000);
      const pending = await this.batches
        .find(olderMs > 0 ? { _id: { $lt: ObjectId.createFromTime(made) } } : {}, {
          limit: 1000,
        })
        .toArray();
      if (pending.length === 0) return counted;
      for (const { _id } of pending) counted += await this.project(_id);
    }
  }

  /** One background recovery pass (none while one runs); a failure is retried by the next. */
  private recoveryPass() {
    if (this.pass || this.closed) return;
    this.pass = this.recover()
      .then((n) => {
        if (n > 0) log("warn", "usage events of an unfinished batch counted", { events: n });
      })
      .catch((err) => {
        if (this.closed) return;
        log("warn", "usage recovery pass failed; retried", { error: (err as Error).message });
      })
      .finally(() => {
        this.pass = null;
      });
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    const docs = await this.dailyDocs
      .find({ a: accountId, day: { $gte: from, $lte: to } }, { projection: { m: 0 } })
      .toArray();
    return docs
      .map((d) => ({
        accountId,
        day: d.day,
        bucket: d.bucket as Bucket,
        requests: d.requests ?? 0,
        errors: d.errors ?? 0,
        rateLimited: d.rateLimited ?? 0,
      }))
      .sort((x, y) => (x.day !== y.day ? (x.day < y.day ? -1 : 1) : x.bucket < y.bucket ? -1 : 1));
  }

  async cells(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    const keep = keepOf(view, hint);
    const periods = new Map<string, PeriodCells>();
    const filter: Filter<RollupDoc> = { a: accountId, v: view, p: { $gte: from, $lte: to } };
    // the top groups' cells of a two-pass read: their documents by _id, when not too many
    if (hint?.keys !== undefined) {
      const list = periodsBetween(from, to, view.startsWith("hour."));
      if (list.length * hint.keys.length <= MAX_ID_LIST) {
        const keys = hint.keys;
        filter._id = {
          $in: list.flatMap((p) => keys.map((k) => rollupPrefix(accountId, view, p) + k)),
        };
      }
    }
    const cursor = this.rollups.find(filter, { projection: { m: 0, a: 0, v: 0 } });
    for await (const d of cursor) {
      const key = d._id.slice(rollupPrefix(accountId, view, d.p).length);
      if (keep && !keep(key)) continue;
      let cells = periods.get(d.p);
      if (!cells) {
        cells = new Map();
        periods.set(d.p, cells);
      }
      // summed: the period's documents added into one cell
      const sum = hint?.summed ? cells.get("") : undefined;
      if (sum) addInto(sum, cellOfDoc(d));
      else cells.set(hint?.summed ? "" : key, cellOfDoc(d));
    }
    return [...periods].map(([t, cells]) => ({ t, cells }));
  }

  /** Requests and cells per cell key over the periods: the range read, only `n` of each document. */
  async cellCounts(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<Map<string, KeyCount>> {
    const keep = keepOf(view, hint);
    const out = new Map<string, KeyCount>();
    const cursor = this.rollups.find(
      { a: accountId, v: view, p: { $gte: from, $lte: to } },
      { projection: { p: 1, n: 1 } },
    );
    for await (const d of cursor) {
      const key = d._id.slice(rollupPrefix(accountId, view, d.p).length);
      if (keep && !keep(key)) continue;
      const c = out.get(key);
      if (c) {
        c.n += d.n ?? 0;
        c.cells++;
      } else out.set(key, { n: d.n ?? 0, cells: 1 });
    }
    return out;
  }

  async misses(accountId: string | null, from: string, to: string) {
    const match: Filter<MissDoc> = { day: { $gte: from, $lte: to } };
    if (accountId !== null) match.a = accountId;
    const out = new Map<string, number>();
    const rows = this.missDocs.aggregate<{ _id: string; n: number }>([
      { $match: match },
      { $group: { _id: "$miss", n: { $sum: "$n" } } },
    ]);
    for await (const r of rows) out.set(r._id, r.n);
    return out;
  }

  private exportFilter(accountId: string, q: ExportQuery): Filter<EventDoc> {
    return {
      accountId,
      ...(q.after === null ? {} : { _id: { $gt: q.after } }),
      day: { $gte: q.from, $lte: q.to },
      ts: { $lt: new Date(q.before) },
    };
  }

  async exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]> {
    const docs = await this.events
      .find(this.exportFilter(accountId, q))
      .sort({ _id: 1 })
      .limit(q.limit)
      .toArray();
    return docs.map((d) => eventOfDoc(d));
  }

  /**
   * The page's size and last id from a query for the page's ids alone (the same bounds and
   * order), then its events from one cursor, EXPORT_CHUNK at a time: the first chunk is sent
   * while the rest is still read.
   */
  async exportStream(accountId: string, q: ExportQuery): Promise<ExportStream> {
    const filter = this.exportFilter(accountId, q);
    const ids = await this.events
      .find(filter, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(q.limit)
      .toArray();
    const events = ids.length;
    const last = ids.at(-1)?._id ?? null;
    if (last === null) return { events: 0, last: null, next: async () => null, close: () => {} };
    const cursor = this.events
      .find({ ...filter, _id: { ...(filter._id as object), $lte: last } })
      .sort({ _id: 1 })
      .batchSize(EXPORT_CHUNK);
    const encoder = new TextEncoder();
    return {
      events,
      last,
      async next() {
        let text = "";
        for (let i = 0; i < EXPORT_CHUNK; i++) {
          const d = await cursor.next();
          if (!d) break;
          text += `${JSON.stringify(eventOfDoc(d))}\n`;
        }
        if (text === "") {
          await cursor.close();
          return null;
        }
        return encoder.encode(text);
      },
      close: () => void cursor.close().catch(() => {}),
    };
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    // unsorted: the port asks for each event once, in no order
    const cursor = this.events.find({ day }).batchSize(5000);
    for await (const doc of cursor) yield eventOfDoc(doc);
  }

  /**
   * Delete raw events of days before `beforeDay` (retention); their projection documents stay.
   * Pending batches are counted first, so no event goes uncounted.
   */
  async prune(beforeDay: string) {
    await this.recover(0);
    const days = await this.events.distinct("day", { day: { $lt: beforeDay } });
    const r = await this.events.deleteMany({ day: { $lt: beforeDay } });
    // the brands those days' periods kept: only a write into them would need them
    await this.brandSlots.deleteMany({ p: { $lt: beforeDay } });
    return { days: days.length, events: r.deletedCount };
  }

  /**
   * Recompute the projections of every day in the log (documents of earlier, pruned days stay):
   * pending batches are counted first; then the events of up to REBUILD_DAYS days at a time are
   * grouped by the server (`$group` on the fields that make a cell, and on each miss list) and
   * the groups written as those days' documents, replacing what was there. Run it while no writer appends (an admin command):
   * a batch counted into a day while it is rebuilt may be counted twice or not at all.
   */
  async rebuildDaily(progress?: (p: { day: string; events: number }) => void) {
    await this.recover(0);
    const days = (await this.events.distinct("day")).sort();
    const first = days[0];
    if (first === undefined) return { events: 0, rows: 0 };
    // the documents of every day in the log go: they are written again below
    await this.serialized(() =>
      Promise.all([
        this.rollups.deleteMany({ p: { $gte: first } }),
        this.dailyDocs.deleteMany({ day: { $gte: first } }),
        this.missDocs.deleteMany({ day: { $gte: first } }),
      ]),
    );
    let events = 0;
    let rows = 0;
    for (let i = 0; i < days.length; i += REBUILD_DAYS) {
      const span = days.slice(i, i + REBUILD_DAYS);
      const deltas = noDeltas();
      events += await this.groupDays(span[0] as string, span.at(-1) as string, deltas);
      rows += deltas.daily.size;
      // the days' documents are new (removed above): inserted whole
      await this.serialized(() =>
        Promise.all(
          PROJECTION_NAMES.map(async (name) => {
            const docs = [...deltas[name]].map(([_id, d]) => wholeDoc(_id, d));
            for (let i = 0; i < docs.length; i += 1000)
              await this.projection(name).insertMany(docs.slice(i, i + 1000), { ordered: false });
          }),
        ),
      );
      progress?.({ day: span.at(-1) as string, events });
    }
    return { events, rows };
  }

  /** Events of days from..to grouped by the server, counted into `deltas`; resolves to the events. */
  private async groupDays(from: string, to: string, deltas: Deltas): Promise<number> {
    type Group = {
      _id: {
        a: string;
        day: string;
        hr: string;
        bucket: string;
        keyId: string;
        slug: string | null;
        variant: string | null;
        format?: string;
        status: number;
        lb: number;
        count?: number;
      };
      docs: number;
    };
    let events = 0;
    const groups = this.events.aggregate<Group>([
      { $match: { day: { $gte: from, $lte: to } } },
      {
        $group: {
          _id: {
            a: "$accountId",
            day: "$day",
            hr: "$hr",
            bucket: "$bucket",
            keyId: "$keyId",
            slug: "$slug",
            variant: "$variant",
            format: "$format",
            status: "$status",
            lb: "$lb",
            count: "$count",
          },
          docs: { $sum: 1 },
        },
      },
    ]);
    const counted: Counted[] = [];
    for await (const { _id: g, docs } of groups) {
      events += docs;
      counted.push({
        accountId: g.a,
        day: g.day,
        hour: `${g.day}T${g.hr}`,
        bucket: g.bucket,
        status: g.status,
        key: allKey({ ...g, bucket: g.bucket as Bucket }),
        bin: g.lb,
        n: docs * (g.count ?? 1),
        misses: [],
      });
    }
    // the brands the periods keep stay; brands not among them are added, most requests first
    const total = new Map<string, number>();
    const brandIn = (c: Counted) => `${c.accountId}|${c.day}|${brandOfKey(c.key)}`;
    for (const c of counted) total.set(brandIn(c), (total.get(brandIn(c)) ?? 0) + c.n);
    counted.sort((x, y) => (total.get(brandIn(y)) ?? 0) - (total.get(brandIn(x)) ?? 0));
    await this.serialized(async () => markOthers(this.brandSlots, counted, await this.isFerret()));
    for (const c of counted) addCounted(deltas, c);
    // grouped by the whole list (FerretDB v1's $unwind drops the other fields), split here
    const misses = this.events.aggregate<{
      _id: { a: string; day: string; miss: string[]; count?: number };
      docs: number;
    }>([
      { $match: { day: { $gte: from, $lte: to }, miss: { $exists: true } } },
      {
        $group: {
          _id: { a: "$accountId", day: "$day", miss: "$miss", count: "$count" },
          docs: { $sum: 1 },
        },
      },
    ]);
    for await (const { _id: g, docs } of misses)
      for (const miss of missesOf({ miss: g.miss } as UsageEvent)) {
        const _id = `${g.a}|${g.day}|${miss}`;
        const d = deltas.misses.get(_id) ?? { set: { a: g.a, day: g.day, miss }, inc: { n: 0 } };
        d.inc.n = (d.inc.n ?? 0) + docs * (g.count ?? 1);
        deltas.misses.set(_id, d);
      }
    return events;
  }

  /**
   * A database whose rollup documents have an older layout (usage_meta `cells` below
   * CELLS_VERSION: no brand bound, the `all` key led by the bucket) is migrated once, at start
   * (src/store/index.ts), before the app serves: the `all` documents of days no longer in the
   * log get their keys in the present field order, then every day in the log is rebuilt (brands
   * bounded); the version is written last. Start every instance on this version first: an older
   * one still writes the old layout. An interrupted migration runs again at the next start
   * (documents already in the present order stay as they are, a rebuild is idempotent).
   */
  async migrateCells(): Promise<void> {
    if ((await this.meta.findOne({ _id: "cells" }))?.v === CELLS_VERSION) return;
    if (await this.rollups.findOne({}, { projection: { _id: 1 } })) {
      const started = Date.now();
      const [first] = await this.events
        .find({}, { projection: { day: 1 } })
        .sort({ day: 1 })
        .limit(1)
        .toArray();
      const before = first?.day ?? "9999";
      const old = { v: { $in: ["day.all", "hour.all"] as View[] }, p: { $lt: before } };
      const ids = (await this.rollups.find(old, { projection: { _id: 1 } }).toArray()).map(
        (d) => d._id,
      );
      for (let i = 0; i < ids.length; i += 1000) {
        const docs = await this.rollups.find({ _id: { $in: ids.slice(i, i + 1000) } }).toArray();
        // documents already in the present order (a migration interrupted before) stay
        const moved = docs.flatMap(({ m: _m, ...d }) => {
          const prefix = rollupPrefix(d.a, d.v, d.p);
          const key = presentAllKey(d._id.slice(prefix.length));
          return prefix + key === d._id ? [] : [{ ...d, _id: prefix + key }];
        });
        if (moved.length === 0) continue;
        // a copy left by an interrupted run is replaced; then the older documents go
        await this.rollups.deleteMany({ _id: { $in: moved.map((d) => d._id) } });
        await this.rollups.insertMany(moved, { ordered: false });
        const gone = new Set(moved.map((d) => d._id));
        await this.rollups.deleteMany({
          _id: { $in: docs.map((d) => d._id).filter((id) => !gone.has(id)) },
        });
      }
      const { events } = await this.rebuildDaily();
      log("info", "usage analytics cells migrated to bounded brands", {
        events,
        ms: Date.now() - started,
      });
    }
    await this.meta.updateOne({ _id: "cells" }, { $set: { v: CELLS_VERSION } }, { upsert: true });
  }

  /** Stop the recovery passes (waiting for one under way). */
  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pass;
  }
}

/** The distinct batch ids of event documents. */
function batchesOf(docs: Pick<EventDoc, "b">[]): ObjectId[] {
  const seen = new Map<string, ObjectId>();
  for (const d of docs) if (d.b) seen.set(d.b.toHexString(), d.b);
  return [...seen.values()];
}

/**
 * The filter a read applies to its view's cell keys (null: none): a keys hint keeps those keys;
 * a brand= read of a rollup led by the brand, or a key= read of `all`, that brand's or key's.
 */
function keepOf(view: View, hint?: CellHint): ((key: string) => boolean) | null {
  if (hint?.keys !== undefined) return hintFilter(hint);
  const use = hint?.brand !== undefined ? BRAND_VIEWS.has(view) : view.endsWith(".all");
  return use ? hintFilter(hint) : null;
}
