import { randomBytes } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { type AnyBulkWriteOperation, Binary, type Collection, MongoBulkWriteError } from "mongodb";
import {
  type Cell,
  type CellProjection,
  groupOf,
  type PeriodCells,
  VIEWS,
  type View,
} from "../../usage/analytics/cells";
import { countInto } from "../../usage/daily";
import type { DailyCounts, DailyRow, UsageEvent } from "../../usage/port";

/**
 * The MongoDB usage store's documents: their shapes, ids and packing, the functions that plan
 * and merge their contents, and the versioned bulk writes and read-backs of them that
 * src/store/mongo/usage.ts uses.
 */
export type EventDoc = UsageEvent & { _id: string };

/**
 * A document of one writer slot's analytics cells of one account and view over one month, its
 * miss counts, or its usage_daily counts. `_id` is "accountId|YYYY-MM|slot" (see docId), so a
 * read computes the `_id`s of the months it needs from the account and the writer registry and
 * fetches each by exact `_id`: FerretDB v1 (SQLite) hands SQLite only an `_id` equality and
 * decodes every document of the collection in Go for any other filter, so a filter costs the
 * whole collection, an `_id` equality only a SQLite scan of its rows (about 1 ns per byte).
 * The content is one deflated JSON text (`c`): cells, period → cell key → [requests, errors,
 * rateLimited, bin, n, bin, n, ...]; misses, day → miss → count; daily, day → bucket →
 * [requests, errors, rateLimited]. Few bytes: FerretDB spends about 30 ns per byte it returns.
 * Its one writer rewrites it whole per batch and keeps it in memory (`v` changes at every write,
 * so a document changed by a rebuild meanwhile is noticed).
 */
export interface CellDoc {
  _id: string;
  accountId: string;
  /** the month, YYYY-MM */
  p: string;
  /** the writer slot */
  w: string;
  /** the split part (`*.all.b`, `*.all.k` documents) */
  part?: number;
  /** a new id at every write */
  v: string;
  /** deflated JSON (a plain JSON text in documents of earlier versions) */
  c: Binary | string;
}

/**
 * A writer slot's list of its documents of one account and group (`usage_manifest_<group>`,
 * `_id` "accountId|m|slot"): `m` is the JSON of document key (month, or month|part) → version. Its
 * writer rewrites it after the documents of each batch, so a read fetches the manifests (one
 * per slot), then only documents that exist, and none whose version it holds already.
 */
export interface ManifestDoc {
  _id: string;
  accountId: string;
  w: string;
  v: string;
  m: string;
}
/** document key → version */
export type Manifest = Record<string, string>;
export const manifestId = (accountId: string, slot: string) => `${accountId}|m|${slot}`;
/** A document version: random, short (manifests list many). */
export const newVersion = () => randomBytes(6).toString("base64url");

/** The key of a document in its manifest. */

/** A usage_daily row of earlier versions (one per account, day, bucket and writer). */
export type LegacyDailyDoc = DailyRow & { _id: string };

/** A writer slot: held by one process at a time, renewed while it runs. */
export interface SlotDoc {
  _id: string;
  /** the process holding it */
  w: string;
  /** epoch ms the hold ends unless renewed */
  until: number;
}

/** A period's cells as stored: cell key → [n, e, r, bin, count, ...]. */
export type StoredPeriod = Record<string, number[]>;
/** A document's content: period → cells, day → miss → count, or day → bucket → counts. */
export type StoredDoc = Record<string, StoredPeriod | Record<string, number>>;

/**
 * A month's document of the daily `all` rollup with at least SPLIT_MIN_CELLS cells is also
 * written split by a hash of the cell's brand (`day.all.b`, 8 parts) and of its key
 * (`day.all.k`, 4 parts), derived whole from it at each write, and listed in the `day.all`
 * manifest as "YYYY-MM|b3", so a `brand=` or `key=` read of a year fetches only the part its
 * value hashes to. Smaller months are read whole (few cells), and their accounts add no
 * documents to the split collections. (An hourly read spans at most 7 days: one or two months.)
 */
export const SPLITS = { b: { field: "brand", parts: 8 }, k: { field: "key", parts: 4 } } as const;
export type Split = keyof typeof SPLITS;
export type SplitView = `day.all.${Split}`;
export const SPLIT_MIN_CELLS = 4000;

export type CellGroupName = View | SplitView | "miss" | "daily";
export const GROUPS: CellGroupName[] = [...VIEWS, "miss", "daily"];

/** The collection of a group's documents: usage_view_day_bs, ..., usage_view_miss, usage_daily. */
export const cellsCollection = (g: CellGroupName) =>
  g === "daily" ? "usage_daily" : `usage_view_${g.replaceAll(".", "_")}`;

/**
 * The collection of a group's manifests (usage_manifest_day_bs, ...): apart from the documents,
 * so a manifest lookup scans (on FerretDB v1) one small row per account and slot.
 */
export const manifestCollection = (g: CellGroupName) => `usage_manifest_${g.replaceAll(".", "_")}`;

/** The part (of SPLITS[split].parts) a brand or key value goes to: FNV-1a of its text. */
export function partOf(split: Split, value: string | null): number {
  const text = value ?? "\u0000";
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SPLITS[split].parts;
}

/**
 * A `day.all` month's content split by brand or key part (part → content), or null when it has
 * fewer than SPLIT_MIN_CELLS cells.
 */
export function splitDoc(split: Split, content: StoredDoc): Map<number, StoredDoc> | null {
  let cells = 0;
  for (const t in content) cells += Object.keys(content[t] as StoredPeriod).length;
  if (cells < SPLIT_MIN_CELLS) return null;
  const out = new Map<number, StoredDoc>();
  const field = SPLITS[split].field;
  const partOfKey = new Map<string, number>();
  for (const t in content) {
    const period = content[t] as StoredPeriod;
    for (const k in period) {
      let part = partOfKey.get(k);
      if (part === undefined) {
        const g = groupOf("all", k);
        part = partOf(split, (g[field] as string | null | undefined) ?? null);
        partOfKey.set(k, part);
      }
      let doc = out.get(part);
      if (!doc) {
        doc = {};
        out.set(part, doc);
      }
      doc[t] ??= {};
      (doc[t] as StoredPeriod)[k] = period[k] as number[];
    }
  }
  return out;
}

/** The document period (month) of a day or hour. */
export const docPeriod = (t: string): string => t.slice(0, 7);

/** The `_id` of a writer slot's document of an account and month (and split part). */
export const docId = (accountId: string, month: string, slot: string, part?: number) =>
  `${accountId}|${month}|${slot}${part === undefined ? "" : `|${part}`}`;

/** The months from..to (days or hours). */
export function monthsOf(from: string, to: string): string[] {
  const out: string[] = [];
  let y = Number(from.slice(0, 4));
  let m = Number(from.slice(5, 7));
  const last = docPeriod(to);
  for (;;) {
    const month = `${y}-${String(m).padStart(2, "0")}`;
    if (month > last) return out;
    out.push(month);
    if (++m > 12) {
      m = 1;
      y++;
    }
  }
}

/** documents (as JSON characters) a reader keeps decoded, the least recently used going first */
export const READ_CACHE_CHARS = 32 * 1024 * 1024;

export const packDoc = (c: StoredDoc): Binary =>
  new Binary(deflateRawSync(JSON.stringify(c), { level: 1 }));
export const unpackText = (c: Binary | string): string =>
  typeof c === "string" ? c : inflateRawSync(c.buffer).toString();
export const unpackDoc = (c: Binary | string): StoredDoc => JSON.parse(unpackText(c)) as StoredDoc;

/** A document's content as read: period → cells (views), or as stored (misses, daily). */
export type ReadContent = Record<string, PeriodCells | StoredPeriod | Record<string, number>>;

/** A view document's periods as cells. */
export function asCells(stored: Record<string, StoredPeriod>): ReadContent {
  const out: ReadContent = {};
  for (const t in stored) {
    const cells: PeriodCells = new Map();
    const period = stored[t] as StoredPeriod;
    for (const k in period) cells.set(k, cellOf(period[k] as number[]));
    out[t] = cells;
  }
  return out;
}

/** The periods from..to of documents' contents, one entry per document and period. */
export function periodsOf(contents: (ReadContent | null)[], from: string, to: string) {
  const out: [string, ReadContent[string]][] = [];
  for (const doc of contents)
    if (doc) for (const t in doc) if (t >= from && t <= to) out.push([t, doc[t] as StoredPeriod]);
  return out;
}

/** Cells of a period in the stored form. */
export function storedPeriod(cells: PeriodCells): StoredPeriod {
  const out: StoredPeriod = {};
  for (const [key, c] of cells) out[key] = [c.n, c.e, c.r, ...c.h];
  return out;
}

/** Add stored cells or miss counts `from` into `into` (same shape). */
export function mergeStored(into: StoredDoc, from: StoredDoc): void {
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

export function addStoredCell(into: number[], c: number[]): void {
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
export const cellOf = (a: number[]): Cell => ({
  n: a[0] as number,
  e: a[1] as number,
  r: a[2] as number,
  h: a.slice(3),
});

/** documents of its own a writer keeps in memory */
export const CACHED_DOCS = 20_000;

/** The unique index of earlier versions (one row per account, day and bucket). */
export const OLD_UNIQUE_INDEX = "account_day_bucket";

/** How long a writer slot stays held without renewal, and how often its holder renews it. */
export const SLOT_LEASE_MS = 10 * 60_000;
export const SLOT_RENEW_MS = 60_000;
/** The slot of the documents `projections rebuild` writes (never held by a process). */
export const REBUILD_SLOT = "r";

/**
 * The split documents of a `day.all` month's content (none below SPLIT_MIN_CELLS), each with
 * its manifest key ("YYYY-MM|b3"), plus a marker key per split ("YYYY-MM|b") saying the month
 * is split (a part without cells has no document).
 */
export function splitDocs(accountId: string, p: string, w: string, content: StoredDoc) {
  const docs: { split: Split; doc: CellDoc }[] = [];
  const keys: [string, string][] = [];
  for (const split of ["b", "k"] as const) {
    const parts = splitDoc(split, content);
    if (!parts) continue;
    keys.push([`${p}|${split}`, "1"]);
    for (const [part, c] of parts) {
      const v = newVersion();
      docs.push({
        split,
        doc: { _id: docId(accountId, p, w, part), accountId, p, w, part, v, c: packDoc(c) },
      });
      keys.push([`${p}|${split}${part}`, v]);
    }
  }
  return { docs, keys };
}

/** A document written: its account, group, key in the manifest and version. */
export interface Written {
  accountId: string;
  g: CellGroupName;
  key: string;
  v: string;
}

/**
 * The write of a whole document by its one writer: an insert, or a replace of the version it
 * last wrote (so a change by someone else meanwhile, a rebuild, makes it miss).
 */
export function versionedWrite<T extends { _id: string }>(
  doc: T,
  had?: string,
): AnyBulkWriteOperation<T> {
  return had === undefined
    ? { insertOne: { document: doc } as never }
    : { replaceOne: { filter: { _id: doc._id, v: had } as never, replacement: doc as never } };
}

/**
 * The stored documents of `ids` (by `_id`): one `$in` query (FerretDB v1 decodes the
 * collection once for it, where each `_id` lookup would scan it), none for no ids.
 */
export async function readBack<T extends { _id: string }>(
  col: Collection<T>,
  ids: string[],
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  if (ids.length === 0) return out;
  for (const d of await col.find({ _id: { $in: ids } } as never).toArray()) out.set(d._id, d as T);
  return out;
}

/** Run the writes; true when every one inserted or matched its document. */
export async function allWritten<T extends { _id: string }>(
  col: Collection<T>,
  ops: AnyBulkWriteOperation<T>[],
): Promise<boolean> {
  try {
    const r = await col.bulkWrite(ops, { ordered: false });
    return r.insertedCount + r.matchedCount === ops.length;
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    return false;
  }
}

/** What a batch (or a rebuild) adds to one document. */
export interface DocPlan {
  accountId: string;
  p: string;
  add: StoredDoc;
}

/** Add period `t`'s content to the plan of its document (account, month, slot). */
export function planAdd(
  plans: Map<string, DocPlan>,
  accountId: string,
  t: string,
  slot: string,
  add: StoredDoc[string],
) {
  const p = docPeriod(t);
  const _id = docId(accountId, p, slot);
  let d = plans.get(_id);
  if (!d) {
    d = { accountId, p, add: {} };
    plans.set(_id, d);
  }
  mergeStored(d.add, { [t]: add });
}

export type Put = (g: CellGroupName, accountId: string, t: string, add: StoredDoc[string]) => void;

/** Hand every group's content of cells and usage_daily sums to `put`, per document period. */
export function foldInto(
  put: Put,
  cells: CellProjection,
  daily: Map<string, Map<string, StoredPeriod>>,
) {
  for (const [accountId, a] of cells.accounts) {
    for (const [view, t, period] of cells.viewPeriods(a)) {
      const stored = storedPeriod(period);
      put(view, accountId, t, stored);
    }
    for (const [day, misses] of a.misses) put("miss", accountId, day, Object.fromEntries(misses));
  }
  for (const [accountId, days] of daily)
    for (const [day, buckets] of days) put("daily", accountId, day, buckets);
}

/**
 * Count an event into usage_daily sums (account → day → bucket → [requests, errors,
 * rateLimited]); true when it opened a new row.
 */
export function addDaily(daily: Map<string, Map<string, StoredPeriod>>, e: UsageEvent): boolean {
  let days = daily.get(e.accountId);
  if (!days) {
    days = new Map();
    daily.set(e.accountId, days);
  }
  let buckets = days.get(e.day);
  if (!buckets) {
    buckets = {};
    days.set(e.day, buckets);
  }
  const c: DailyCounts = { requests: 0, errors: 0, rateLimited: 0 };
  countInto(c, e.status, e.count ?? 1);
  const had = buckets[e.bucket];
  if (had) {
    had[0] = (had[0] as number) + c.requests;
    had[1] = (had[1] as number) + c.errors;
    had[2] = (had[2] as number) + c.rateLimited;
    return false;
  }
  buckets[e.bucket] = [c.requests, c.errors, c.rateLimited];
  return true;
}
