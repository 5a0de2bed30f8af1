import {
  type AnyBulkWriteOperation,
  type Collection,
  MongoBulkWriteError,
  type ObjectId,
  type WriteError,
} from "mongodb";
import {
  allKey,
  brandOfKey,
  type Cell,
  isUnbounded,
  latencyBin,
  missesOf,
  otherKey,
  ROLLUP_NAMES,
  rollupKey,
  TOP_BRANDS,
  type View,
} from "../../usage/analytics/cells";
import type { UsageEvent } from "../../usage/port";
import { usageEvent } from "../../usage/serialize";
import { DUPLICATE_KEY } from "./errors";
import { FERRET_UPDATES_PER_BULK } from "./ferret";

/**
 * The MongoDB usage store's documents (see docs/mongodb.md):
 *  - `usage_events`: one document per event (EventDoc), never changed;
 *  - `usage_batches`: one per batch whose events may not be counted yet (BatchDoc);
 *  - `usage_rollups`: one document per analytics cell (account, view, period, cell key);
 *  - `usage_daily`: one per account, day and bucket; `usage_misses`: one per account, day, miss.
 * A projection document is only ever changed by `$inc` upserts carrying the id of the batch
 * they count (see markedOps), so each batch is counted into it once.
 */

/** The newest batch ids a projection document keeps as markers (its `m` array). */
export const MARKERS = 64;

/** A usage event as stored: the event's fields (ts as a Date) plus the projection's own. */
export interface EventDoc extends Omit<UsageEvent, "id" | "ts"> {
  _id: string;
  ts: Date;
  /** the batch that first stored it (kept when a retry stores it again) */
  b: ObjectId;
  /** its latency bin (latencyBin), so a rebuild can `$group` by it */
  lb: number;
  /** its UTC hour, "HH" */
  hr: string;
}

export function docOf(e: UsageEvent, b: ObjectId): EventDoc {
  const { id, ts, ...fields } = e;
  const doc: EventDoc = {
    _id: id,
    ts: new Date(ts),
    ...fields,
    b,
    lb: latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0),
    hr: ts.slice(11, 13),
  };
  // an absent optional field stays absent (the driver would store undefined as null)
  for (const k in doc) if (doc[k as keyof EventDoc] === undefined) delete doc[k as keyof EventDoc];
  return doc;
}

/** The event of a stored document, fields in the stored order (as the embedded store's). */
export const eventOfDoc = (d: EventDoc): UsageEvent =>
  usageEvent(d._id, d.ts.toISOString(), d.day, d);

/** A batch not known to be counted: made before its events are stored, removed once counted. */
export interface BatchDoc {
  _id: ObjectId;
}

/** An analytics cell as stored: counts and the latency histogram as `h.<bin>` counters. */
export interface RollupDoc {
  _id: string;
  a: string;
  v: View;
  /** the period: YYYY-MM-DD, or YYYY-MM-DDTHH */
  p: string;
  n?: number;
  e?: number;
  r?: number;
  h?: Record<string, number>;
  m?: ObjectId[];
}

export interface DailyDoc {
  _id: string;
  a: string;
  day: string;
  bucket: string;
  requests?: number;
  errors?: number;
  rateLimited?: number;
  m?: ObjectId[];
}

export interface MissDoc {
  _id: string;
  a: string;
  day: string;
  miss: string;
  n?: number;
  m?: ObjectId[];
}

export const PROJECTIONS = {
  rollups: "usage_rollups",
  daily: "usage_daily",
  misses: "usage_misses",
} as const;
export type Projection = keyof typeof PROJECTIONS;
export const PROJECTION_NAMES = Object.keys(PROJECTIONS) as Projection[];

/** A rollup document's `_id` prefix; the cell key follows it. */
export const rollupPrefix = (a: string, v: View, p: string) => `${a}|${v}|${p}|`;

/** A stored rollup document as a Cell (histogram pairs in bin order). */
export function cellOfDoc(d: RollupDoc): Cell {
  const h: number[] = [];
  const bins = Object.keys(d.h ?? {})
    .map(Number)
    .sort((x, y) => x - y);
  for (const bin of bins) h.push(bin, (d.h as Record<string, number>)[bin] as number);
  return { n: d.n ?? 0, e: d.e ?? 0, r: d.r ?? 0, h };
}

/** What one batch adds to one projection document: its fields (on insert) and counters. */
export interface Delta {
  set: Record<string, string>;
  inc: Record<string, number>;
}
export type Deltas = Record<Projection, Map<string, Delta>>;
export const noDeltas = (): Deltas => ({ rollups: new Map(), daily: new Map(), misses: new Map() });

/** Requests of one account, hour, cell and latency bin: an event, or a rebuild's group. */
export interface Counted {
  accountId: string;
  day: string;
  /** YYYY-MM-DDTHH */
  hour: string;
  bucket: string;
  status: number;
  /** the `all` cell key (allKey) */
  key: string;
  bin: number;
  n: number;
  misses: string[];
  /** the periods (by granularity) whose brands are taken: counted under OTHER_BRAND there */
  other?: { day?: true; hour?: true };
}

export const countedOf = (e: UsageEvent): Counted => ({
  accountId: e.accountId,
  day: e.day,
  hour: e.ts.slice(0, 13),
  bucket: e.bucket,
  status: e.status,
  key: allKey(e),
  bin: latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0),
  n: e.count ?? 1,
  misses: missesOf(e),
});

function deltaOf(m: Map<string, Delta>, _id: string, set: () => Record<string, string>): Delta {
  let d = m.get(_id);
  if (!d) {
    d = { set: set(), inc: {} };
    m.set(_id, d);
  }
  return d;
}

const add = (inc: Record<string, number>, field: string, n: number) => {
  inc[field] = (inc[field] ?? 0) + n;
};

/** Count requests into every document they belong to (the usage_daily rules for e and r). */
export function addCounted(d: Deltas, c: Counted): void {
  const errors = c.status !== 429 && c.status >= 400;
  for (const g of ["day", "hour"] as const) {
    const p = g === "day" ? c.day : c.hour;
    const key = c.other?.[g] ? otherKey(c.key) : c.key;
    for (const r of ROLLUP_NAMES) {
      const v: View = `${g}.${r}`;
      const _id = rollupPrefix(c.accountId, v, p) + rollupKey(key, r);
      const { inc } = deltaOf(d.rollups, _id, () => ({ a: c.accountId, v, p }));
      add(inc, "n", c.n);
      if (c.status === 429) add(inc, "r", c.n);
      else if (errors) add(inc, "e", c.n);
      add(inc, `h.${c.bin}`, c.n);
    }
  }
  const day = deltaOf(d.daily, `${c.accountId}|${c.day}|${c.bucket}`, () => ({
    a: c.accountId,
    day: c.day,
    bucket: c.bucket,
  })).inc;
  add(day, "requests", c.n);
  if (c.status === 429) add(day, "rateLimited", c.n);
  else if (errors) add(day, "errors", c.n);
  for (const miss of c.misses)
    add(
      deltaOf(d.misses, `${c.accountId}|${c.day}|${miss}`, () => ({
        a: c.accountId,
        day: c.day,
        miss,
      })).inc,
      "n",
      c.n,
    );
}

/** A document holding just one delta (a rebuild's): its counters, `h.<bin>` as `h: {bin: n}`. */
export function wholeDoc(_id: string, d: Delta): { _id: string } {
  const doc: Record<string, unknown> = { _id, ...d.set };
  const h: Record<string, number> = {};
  for (const [field, n] of Object.entries(d.inc))
    if (field.startsWith("h.")) h[field.slice(2)] = n;
    else doc[field] = n;
  if (Object.keys(h).length > 0) doc.h = h;
  return doc as { _id: string };
}

/** The deltas of a batch of events, every brand in its own cells: one per document it touches. */
export function deltasOf(events: UsageEvent[]): Deltas {
  const d = noDeltas();
  for (const e of events) addCounted(d, countedOf(e));
  return d;
}

/**
 * The brands one account keeps cells of in one period (`usage_brands`, `_id` `account|period`):
 * at most TOP_BRANDS, added in the order they are first counted and never removed.
 */
export interface BrandSlotDoc {
  _id: string;
  /** the period: YYYY-MM-DD, or YYYY-MM-DDTHH */
  p: string;
  /** the brands (encoded as in cell keys) */
  b: string[];
}

/**
 * Mark which of `list` count under OTHER_BRAND: in each account's day and hour, brands not in
 * its usage_brands document are added while it has fewer than TOP_BRANDS, in list order (a
 * rebuild passes its groups by requests, most first); the brands the document then holds keep
 * their cells. A brand's answer never changes once given (the set only grows, and only while
 * it has room), so a batch counted again (retry, recovery) is counted into the same documents.
 * `serialized`: no other writer runs meanwhile (FerretDB's lease): brands are added by `_id`
 * alone; else each addition is conditional on the room left, so writers at once never exceed
 * TOP_BRANDS.
 */
export async function markOthers(
  col: Collection<BrandSlotDoc>,
  list: Counted[],
  serialized: boolean,
): Promise<void> {
  const wanted = new Map<string, { p: string; brands: Set<string> }>();
  const slotOf = (c: Counted, g: "day" | "hour") => {
    const p = g === "day" ? c.day : c.hour;
    return `${c.accountId}|${p}`;
  };
  for (const c of list) {
    const brand = brandOfKey(c.key);
    if (isUnbounded(brand)) continue;
    for (const g of ["day", "hour"] as const) {
      const _id = slotOf(c, g);
      let w = wanted.get(_id);
      if (!w) {
        w = { p: g === "day" ? c.day : c.hour, brands: new Set() };
        wanted.set(_id, w);
      }
      w.brands.add(brand);
    }
  }
  if (wanted.size === 0) return;
  const ids = [...wanted.keys()];
  const read = async () => {
    const sets = new Map<string, Set<string>>();
    for (let i = 0; i < ids.length; i += CHUNK)
      for (const d of await col.find({ _id: { $in: ids.slice(i, i + CHUNK) } }).toArray())
        sets.set(d._id, new Set(d.b));
    return sets;
  };
  const had = await read();
  const ops: AnyBulkWriteOperation<BrandSlotDoc>[] = [];
  for (const [_id, { p, brands }] of wanted) {
    const set = had.get(_id) ?? new Set<string>();
    const add = [...brands].filter((b) => !set.has(b)).slice(0, TOP_BRANDS - set.size);
    if (add.length === 0) continue;
    if (serialized)
      ops.push({
        updateOne: {
          filter: { _id },
          update: { $setOnInsert: { p }, $addToSet: { b: { $each: add } } },
          upsert: true,
        },
      });
    else
      for (const b of add)
        ops.push({
          updateOne: {
            filter: { _id, [`b.${TOP_BRANDS - 1}`]: { $exists: false } },
            update: { $setOnInsert: { p }, $addToSet: { b } },
            upsert: true,
          },
        });
  }
  // a duplicate key twice: the document exists and is full (see applyMarked)
  await applyMarked(col, ops);
  const sets = ops.length > 0 ? await read() : had;
  for (const c of list) {
    const brand = brandOfKey(c.key);
    if (isUnbounded(brand)) continue;
    for (const g of ["day", "hour"] as const)
      if (!sets.get(slotOf(c, g))?.has(brand)) {
        c.other ??= {};
        c.other[g] = true;
      }
  }
}

/**
 * The upserts that count batch `b` into documents: each applies only to a document that does
 * not hold `b` among its markers yet, and adds `b` to them (the newest MARKERS kept).
 */
export function markedOps<T extends { _id: string }>(
  deltas: Map<string, Delta>,
  b: ObjectId,
): AnyBulkWriteOperation<T>[] {
  const ops: AnyBulkWriteOperation<T>[] = [];
  for (const [_id, d] of deltas)
    ops.push({
      updateOne: {
        filter: { _id, m: { $ne: b } } as never,
        update: {
          $setOnInsert: d.set,
          $inc: d.inc,
          $push: { m: { $each: [b], $slice: -MARKERS } },
        } as never,
        upsert: true,
      },
    });
  return ops;
}

/** The write errors of a bulk write error (the driver gives one or a list). */
export function writeErrorsOf(err: MongoBulkWriteError): WriteError[] {
  const w = err.writeErrors as WriteError | WriteError[] | undefined;
  return w ? (Array.isArray(w) ? w : [w]) : [];
}

/** Writes per bulkWrite call. */
const CHUNK = 1000;

/**
 * Run marked upserts (unordered). A duplicate-key error says the document exists but the filter
 * did not match it: either it holds the marker already, or another batch inserted it between
 * the match and the insert; so such upserts run once more, and a second duplicate-key error
 * means the marker is there (a projection document is never deleted, except by a rebuild).
 * (markOthers runs its conditional upserts the same way: there a second duplicate-key error
 * means the brand list is full.)
 * Any other failure throws: the caller applies the batch again later.
 */
export async function applyMarked<T extends { _id: string }>(
  col: Collection<T>,
  ops: AnyBulkWriteOperation<T>[],
): Promise<void> {
  let pending = ops;
  for (let round = 0; round < 2 && pending.length > 0; round++) {
    const again: AnyBulkWriteOperation<T>[] = [];
    for (let i = 0; i < pending.length; i += CHUNK) {
      const chunk = pending.slice(i, i + CHUNK);
      try {
        await col.bulkWrite(chunk, { ordered: false });
      } catch (err) {
        if (!(err instanceof MongoBulkWriteError)) throw err;
        const errors = writeErrorsOf(err);
        if (errors.length === 0 || errors.some((w) => w.code !== DUPLICATE_KEY)) throw err;
        for (const w of errors) again.push(chunk[w.index] as AnyBulkWriteOperation<T>);
      }
    }
    pending = again;
  }
}

/**
 * FerretDB v1's form of applyMarked, for a caller that holds the projection lease (no other
 * writer meanwhile). FerretDB hands SQLite a filter only when it is a lone `_id`, so a filter
 * with the marker would read the whole collection per update: here the documents' markers are
 * read first (one query), documents that hold `b` are left out, and the rest are updated by
 * `_id` alone, their markers cut to the newest MARKERS in the same update (FerretDB ignores
 * `$slice`), FERRET_UPDATES_PER_BULK per bulk write.
 */
export async function applyChecked<T extends { _id: string; m?: ObjectId[] }>(
  col: Collection<T>,
  deltas: Map<string, Delta>,
  b: ObjectId,
): Promise<void> {
  const ids = [...deltas.keys()];
  const had = new Map<string, ObjectId[]>();
  for (let i = 0; i < ids.length; i += CHUNK)
    for (const d of await col
      .find({ _id: { $in: ids.slice(i, i + CHUNK) } } as never, {
        projection: { m: 1 },
        batchSize: CHUNK,
      })
      .toArray())
      had.set(d._id, d.m ?? []);
  const ops: AnyBulkWriteOperation<T>[] = [];
  for (const [_id, d] of deltas) {
    const m = had.get(_id);
    if (m?.some((x) => x.equals(b))) continue;
    const marker =
      m && m.length >= MARKERS
        ? { $set: { m: [...m.slice(-(MARKERS - 1)), b] } }
        : { $push: { m: b } };
    ops.push({
      updateOne: {
        filter: { _id } as never,
        update: { $setOnInsert: d.set, $inc: d.inc, ...marker } as never,
        upsert: true,
      },
    });
  }
  for (let i = 0; i < ops.length; i += FERRET_UPDATES_PER_BULK)
    await col.bulkWrite(ops.slice(i, i + FERRET_UPDATES_PER_BULK), { ordered: false });
}
