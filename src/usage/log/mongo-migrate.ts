import type { AnyBulkWriteOperation, Db, Document, ObjectId } from "mongodb";
import { log } from "../../platform/log";
import {
  allKey,
  brandOfKey,
  isUnbounded,
  latencyBin,
  missesOf,
  otherKey,
  presentAllKey,
  ROLLUP_NAMES,
  type Rollup,
  rollupKey,
  TOP_BRANDS,
  type View,
} from "../analytics/cells";
import { isUsageEvent } from "../daily";
import type { UsageEvent } from "../event";
import { movedBatches } from "./batch";
import { fieldsOfKey } from "./cell-keys";
import { docOfBatch, type MongoUsageLog } from "./mongo";
import { DocStrings, type PeriodDoc, periodFields, readDocCells } from "./mongo-periods";
import { PeriodCells } from "./period";
import { type DailyCounts, dailyRowsOf, firstHourKept } from "./port";

/**
 * The per-event MongoDB layout (`usage_events`: a document per event; `usage_rollups`: a
 * document per analytics cell, `$inc`ed with batch markers; `usage_daily`, `usage_misses`,
 * `usage_brands`, `usage_batches`: batches not counted yet) moved into the batch log once, at
 * start, by the instance that holds the projector's lease (no other instance counts meanwhile;
 * instances of the earlier version must be stopped first, see docs/mongodb.md):
 *  1. batches left pending by a process that died are counted into the old documents first, as
 *     the old recovery did (documents holding the batch's marker left out);
 *  2. each old cell becomes a counter of its account and period's document (`$set`: a run
 *     taken up again sets the same values), with the period's brands;
 *  3. the events become batches per account and day that keep their ids (numbered from their
 *     first id: a second run makes the same `_id`s, found and skipped), already counted;
 *  4. usage_daily rows that differ from their day's cells are kept apart (usage_daily_kept);
 *  5. miss documents lose their marker lists; the old collections are dropped last.
 * Each step logs a line; a start after a crash runs the whole move again, to the same result.
 */

const OLD = ["usage_events", "usage_rollups", "usage_batches", "usage_brands", "usage_daily"];
const BULK = 32;
const READ = 1000;

export async function migrateMongo(db: Db, usage: MongoUsageLog, now = Date.now()): Promise<void> {
  const names = new Set(
    (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
  );
  if (!names.has("usage_events") && !names.has("usage_rollups")) return;
  await usage.exclusive(async () => {
    // another instance may have finished the move while this one waited for the lease
    const again = new Set(
      (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
    );
    if (!again.has("usage_events") && !again.has("usage_rollups")) return;
    const started = Date.now();
    const total = again.has("usage_events")
      ? await db.collection("usage_events").estimatedDocumentCount()
      : 0;
    log("info", "usage log: moving the per-event MongoDB layout (once)", { events: total });
    await countPending(db);
    const periods = await moveCells(db, firstHourKept(usage.hourlyDays, now));
    log("info", "usage log: analytics cells moved", { periods });
    const events = await moveEvents(db, total);
    log("info", "usage log: events moved", { moved: events, of: total });
    const kept = await keepDaily(db);
    log("info", "usage log: daily counts moved", { keptApart: kept });
    await unmarkMisses(db);
    for (const name of [...OLD, "usage_locks", "usage_meta"])
      if (again.has(name))
        await db
          .collection(name)
          .drop()
          .catch(() => {});
    log("info", "usage log: per-event layout moved", { events, ms: Date.now() - started });
  });
}

/** Old cell documents' `h.<bin>` counters as a `{bin: n}` object (as they are). */
type OldCell = {
  _id: string;
  a: string;
  v: View;
  p: string;
  n?: number;
  e?: number;
  r?: number;
  h?: Record<string, number>;
  m?: ObjectId[];
};

/**
 * Step 1: every pending batch of the old layout counted into the old documents, the way the
 * old recovery did: the batch's brands admitted into usage_brands while a period has room, then
 * each document it touches that does not hold its marker gets its counts and the marker.
 */
async function countPending(db: Db): Promise<void> {
  const pending = await db.collection<{ _id: ObjectId }>("usage_batches").find({}).toArray();
  for (const { _id: b } of pending) {
    const events = (await db.collection("usage_events").find({ b }).toArray()).map((d) => {
      const { _id, ts, b: _b, lb: _lb, hr: _hr, ...rest } = d as Document;
      return { ...rest, id: _id, ts: (ts as Date).toISOString() } as unknown as UsageEvent;
    });
    const deltas = new Map<
      string,
      { col: string; set: Record<string, unknown>; inc: Record<string, number> }
    >();
    const add = (
      col: string,
      _id: string,
      set: Record<string, unknown>,
      field: string,
      n: number,
    ) => {
      let d = deltas.get(`${col}\u0000${_id}`);
      if (!d) {
        d = { col, set, inc: {} };
        deltas.set(`${col}\u0000${_id}`, d);
      }
      d.inc[field] = (d.inc[field] ?? 0) + n;
    };
    // the brands each account's periods keep: read, and added to while there is room
    const slots = new Map<string, string[]>();
    for (const e of events.filter(isUsageEvent))
      for (const p of [e.day, e.ts.slice(0, 13)]) {
        const sid = `${e.accountId}|${p}`;
        if (!slots.has(sid))
          slots.set(
            sid,
            (
              (
                await db
                  .collection<{ _id: string; b?: string[] }>("usage_brands")
                  .findOne({ _id: sid })
              )?.b ?? []
            ).slice(),
          );
      }
    for (const e of events.filter(isUsageEvent)) {
      const key = allKey(e);
      const n = e.count ?? 1;
      const status = e.status;
      const bin = latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0);
      for (const [g, p] of [
        ["day", e.day],
        ["hour", e.ts.slice(0, 13)],
      ] as const) {
        const brands = slots.get(`${e.accountId}|${p}`) as string[];
        const brand = brandOfKey(key);
        let own = key;
        if (!isUnbounded(brand) && !brands.includes(brand)) {
          if (brands.length < TOP_BRANDS) brands.push(brand);
          else own = otherKey(key);
        }
        for (const r of ROLLUP_NAMES) {
          const v = `${g}.${r}` as View;
          const _id = `${e.accountId}|${v}|${p}|${rollupKey(own, r)}`;
          const set = { a: e.accountId, v, p };
          add("usage_rollups", _id, set, "n", n);
          if (status === 429) add("usage_rollups", _id, set, "r", n);
          else if (status >= 400) add("usage_rollups", _id, set, "e", n);
          add("usage_rollups", _id, set, `h.${bin}`, n);
        }
      }
      const dset = { a: e.accountId, day: e.day, bucket: e.bucket };
      const did = `${e.accountId}|${e.day}|${e.bucket}`;
      add("usage_daily", did, dset, "requests", n);
      if (status === 429) add("usage_daily", did, dset, "rateLimited", n);
      else if (status >= 400) add("usage_daily", did, dset, "errors", n);
      for (const miss of missesOf(e))
        add(
          "usage_misses",
          `${e.accountId}|${e.day}|${miss}`,
          { a: e.accountId, day: e.day, miss },
          "n",
          n,
        );
    }
    for (const [sid, b] of slots)
      await db
        .collection<{ _id: string }>("usage_brands")
        .updateOne(
          { _id: sid } as Document,
          { $set: { b, p: sid.slice(sid.lastIndexOf("|") + 1) } },
          { upsert: true },
        );
    const byCol = new Map<
      string,
      [string, { set: Record<string, unknown>; inc: Record<string, number> }][]
    >();
    for (const [k, d] of deltas) {
      const list = byCol.get(d.col) ?? [];
      list.push([k.slice(k.indexOf("\u0000") + 1), d]);
      byCol.set(d.col, list);
    }
    for (const [col, list] of byCol) {
      const c = db.collection<{ _id: string; m?: ObjectId[] }>(col);
      const held = new Set<string>();
      for (let i = 0; i < list.length; i += READ)
        for (const d of await c
          .find(
            { _id: { $in: list.slice(i, i + READ).map(([id]) => id) } },
            { projection: { m: 1 } },
          )
          .toArray())
          if (d.m?.some((x) => x.equals(b))) held.add(d._id);
      const ops: AnyBulkWriteOperation<{ _id: string; m?: ObjectId[] }>[] = list
        .filter(([id]) => !held.has(id))
        .map(([_id, d]) => ({
          updateOne: {
            filter: { _id },
            update: { $setOnInsert: d.set, $inc: d.inc, $push: { m: b } } as never,
            upsert: true,
          },
        }));
      for (let i = 0; i < ops.length; i += BULK)
        await c.bulkWrite(ops.slice(i, i + BULK), { ordered: false });
    }
    await db.collection("usage_batches").deleteOne({ _id: b });
    log("info", "usage log: a batch left pending by the per-event layout counted", {
      events: events.length,
    });
  }
}

/**
 * Step 2: the old cells as the period documents of their account and period, each written whole
 * (a run taken up again writes the same documents).
 */
async function moveCells(db: Db, firstHour: number): Promise<number> {
  const brands = new Map<string, string[]>();
  for await (const d of db.collection<{ _id: string; b?: string[] }>("usage_brands").find({}))
    brands.set(
      d._id,
      (d.b ?? []).map((x) => decodeURIComponent(x)),
    );
  const rollups = db.collection<OldCell>("usage_rollups");
  const periodDocs = db.collection<PeriodDoc>("usage_periods");
  let periods = 0;
  for (const a of (await rollups.distinct("a")) as string[])
    for (const hourly of [false, true]) {
      const views = ROLLUP_NAMES.map((r): View => `${hourly ? "hour" : "day"}.${r}`);
      const list = ((await rollups.distinct("p", { a, v: { $in: views } })) as string[]).sort();
      for (const p of list) {
        if (hourly && Date.parse(`${p}:00:00Z`) / 3_600_000 < firstHour) continue;
        const cells = new PeriodCells();
        cells.brands = (brands.get(`${a}|${p}`) ?? []).slice();
        for await (const d of rollups.find({ a, v: { $in: views }, p }, { projection: { m: 0 } })) {
          const rollup = d.v.slice(d.v.indexOf(".") + 1) as Rollup;
          let key = d._id.slice(`${d.a}|${d.v}|${d.p}|`.length);
          if (rollup === "all") key = presentAllKey(key);
          const bins = Object.keys(d.h ?? {})
            .map(Number)
            .sort((x, y) => x - y);
          const h: number[] = [];
          for (const bin of bins) h.push(bin, (d.h as Record<string, number>)[bin] as number);
          cells.add(
            ROLLUP_NAMES.indexOf(rollup),
            fieldsOfKey(rollup, key),
            d.n ?? 0,
            d.e ?? 0,
            d.r ?? 0,
            h,
          );
        }
        const g = hourly ? "h" : "d";
        await periodDocs.replaceOne(
          { _id: `${a}|${g}|${p}` },
          { a, g, p, m: null, ...periodFields(cells, new DocStrings()) },
          { upsert: true },
        );
        periods++;
      }
    }
  return periods;
}

/** Step 3: the old events as batches that keep their ids, counted already (no `p`). */
async function moveEvents(db: Db, total: number): Promise<number> {
  let moved = 0;
  let shown = 0;
  let account = "";
  let chunk: UsageEvent[] = [];
  const put = async () => {
    if (chunk.length === 0) return;
    const docs = movedBatches(chunk).map(docOfBatch);
    try {
      await db.collection("usage_log").insertMany(docs as never[], { ordered: false });
    } catch (err) {
      // a run taken up again: the batches it had moved are there (the same ids)
      const codes = ((err as { writeErrors?: { code: number }[] | { code: number } }).writeErrors ??
        []) as { code: number }[] | { code: number };
      const list = Array.isArray(codes) ? codes : [codes];
      if (list.length === 0 || list.some((w) => w.code !== 11000)) throw err;
    }
    moved += chunk.length;
    chunk = [];
    if (moved - shown >= 100_000) {
      shown = moved;
      log("info", "usage log: events moved", { moved, of: total });
    }
  };
  const cursor = db
    .collection("usage_events")
    .find({}, { projection: { b: 0, lb: 0, hr: 0 } })
    .sort({ accountId: 1, _id: 1 })
    .batchSize(READ);
  for await (const d of cursor) {
    const { _id, ts, ...rest } = d as Document;
    const e = { ...rest, id: _id, ts: (ts as Date).toISOString() } as unknown as UsageEvent;
    if (!isUsageEvent(e)) continue;
    if (e.accountId !== account || chunk.length >= READ) {
      await put();
      account = e.accountId;
    }
    chunk.push(e);
  }
  await put();
  return moved;
}

/** Step 4: old usage_daily rows (summed per account, day and bucket) that differ from the cells. */
async function keepDaily(db: Db): Promise<number> {
  const rows = new Map<
    string,
    {
      a: string;
      day: string;
      bucket: string;
      requests: number;
      errors: number;
      rateLimited: number;
    }
  >();
  for await (const d of db.collection("usage_daily").find({}, { projection: { m: 0 } })) {
    const k = `${d.a}|${d.day}|${d.bucket}`;
    const r = rows.get(k) ?? {
      a: d.a,
      day: d.day,
      bucket: d.bucket,
      requests: 0,
      errors: 0,
      rateLimited: 0,
    };
    r.requests += d.requests ?? 0;
    r.errors += d.errors ?? 0;
    r.rateLimited += d.rateLimited ?? 0;
    rows.set(k, r);
  }
  const byDay = new Map<string, (typeof rows extends Map<string, infer V> ? V : never)[]>();
  for (const r of rows.values()) {
    const k = `${r.a}|${r.day}`;
    const list = byDay.get(k) ?? [];
    list.push(r);
    byDay.set(k, list);
  }
  let kept = 0;
  for (const [k, list] of byDay) {
    const doc = await db
      .collection<PeriodDoc>("usage_periods")
      .findOne({ _id: `${k.slice(0, k.lastIndexOf("|"))}|d|${k.slice(k.lastIndexOf("|") + 1)}` });
    const cells = doc ? readDocCells(doc, ROLLUP_NAMES.indexOf("bs")) : [];
    const derived = new Map<string, DailyCounts>(
      dailyRowsOf("", "", cells).map((r) => [r.bucket, r]),
    );
    const same =
      derived.size === list.length &&
      list.every((r) => {
        const d = derived.get(r.bucket);
        return (
          d && d.requests === r.requests && d.errors === r.errors && d.rateLimited === r.rateLimited
        );
      });
    if (same) continue;
    kept += list.length;
    for (const r of list)
      await db
        .collection<{ _id: string }>("usage_daily_kept")
        .replaceOne({ _id: `${r.a}|${r.day}|${r.bucket}` }, r, { upsert: true });
  }
  return kept;
}

/** Step 5: miss documents without the old marker lists (the projector's markers are plain). */
async function unmarkMisses(db: Db): Promise<void> {
  const ids: string[] = [];
  for await (const d of db
    .collection<{ _id: string; m?: unknown }>("usage_misses")
    .find({}, { projection: { m: 1 } }))
    if (Array.isArray(d.m)) ids.push(d._id);
  for (let i = 0; i < ids.length; i += BULK)
    await db.collection<{ _id: string }>("usage_misses").bulkWrite(
      ids
        .slice(i, i + BULK)
        .map((_id) => ({ updateOne: { filter: { _id }, update: { $unset: { m: "" } } } })),
      { ordered: false },
    );
}
