import { crc32 } from "node:zlib";
import type { CountableEvent } from "../../quota/gate";
import { BUCKETS, type Bucket, type Tier } from "../../quota/limits";
import type { UsageEvent } from "../event";
import { ByteReader, ByteWriter } from "./bytes";

/**
 * A batch: the usage events of one account and one UTC day from one flush, columnar (one typed
 * array per field, strings as indexes into the batch's own `strings`), sorted by time. It is the
 * unit the log stores (a row on the embedded store, a document on MongoDB), idempotent on its id:
 * the account, its first event's time `t0` and its number `q`. An event's id is derived from its
 * batch and position (`eventId`), so none is stored (except for events migrated from the
 * per-event log, whose ids are kept in `ids`).
 */
export interface Batch {
  account: string;
  /** epoch ms of its first event (the smallest `at`) */
  t0: number;
  /** the batch number (40 bits): with the account and t0, the batch's identity */
  q: number;
  n: number;
  /** the strings the columns refer to */
  strings: string[];
  /** when each event was metered (epoch ms, integers), ascending */
  at: Float64Array;
  /** string indexes; NONE for null */
  key: Int32Array;
  tier: Int32Array;
  route: Int32Array;
  slug: Int32Array;
  variant: Int32Array;
  format: Int32Array;
  /** index into BUCKETS */
  bucket: Uint8Array;
  status: Uint16Array;
  /** latency in microseconds */
  lat: Uint32Array;
  /** requests each event stands for (folded 429 refusals); null: all 1 */
  count: Uint32Array | null;
  /** the misses of each event (string indexes); null: none in the batch */
  miss: (number[] | null)[] | null;
  /** explicit event ids (events migrated from the per-event log); null: derived */
  ids: string[] | null;
}

export const NONE = -1;
/** Most events in one batch: positions fit the 16 bits an event id gives them. */
export const MAX_BATCH_EVENTS = 0xffff;
const BUCKET_INDEX = new Map<string, number>(BUCKETS.map((b, i) => [b, i]));

export const bucketIndex = (b: string): number => BUCKET_INDEX.get(b) ?? 0;
export const bucketName = (i: number): Bucket => (BUCKETS[i] ?? "svg") as Bucket;

/** A batch's events as the quota counters count them (a folded refusal stands for its count). */
export function* countablesOf(b: Batch, day: string): Iterable<CountableEvent> {
  for (let i = 0; i < b.n; i++) {
    const key = b.key[i] as number;
    yield {
      day,
      accountId: b.account,
      keyId: key < 0 ? "" : (b.strings[key] as string),
      bucket: bucketName(b.bucket[i] as number),
      status: b.status[i] as number,
      events: b.count ? (b.count[i] as number) : 1,
    };
  }
}

/** Bytes of the columns of one event (at, 6 string columns, bucket, status, latency). */
const EVENT_BYTES = 8 + 6 * 4 + 4 + 2 + 1;

/** An empty batch of `n` events (columns zeroed, all in one buffer). */
export function emptyBatch(account: string, n: number): Batch {
  const buf = new ArrayBuffer(n * EVENT_BYTES);
  let at = 0;
  const take = (bytes: number) => {
    const start = at;
    at += n * bytes;
    return start;
  };
  return {
    account,
    t0: 0,
    q: 0,
    n,
    strings: [],
    at: new Float64Array(buf, take(8), n),
    key: new Int32Array(buf, take(4), n),
    tier: new Int32Array(buf, take(4), n),
    route: new Int32Array(buf, take(4), n),
    slug: new Int32Array(buf, take(4), n),
    variant: new Int32Array(buf, take(4), n),
    format: new Int32Array(buf, take(4), n),
    lat: new Uint32Array(buf, take(4), n),
    status: new Uint16Array(buf, take(2), n),
    bucket: new Uint8Array(buf, take(1), n),
    count: null,
    miss: null,
    ids: null,
  };
}

/** The UTC day number (days since the epoch) of a time in ms. */
export const dayNo = (ms: number): number => Math.floor(ms / 86_400_000);
/** The UTC hour number (hours since the epoch) of a time in ms. */
export const hourNo = (ms: number): number => Math.floor(ms / 3_600_000);

const HEX = "0123456789abcdef";
/** A non-negative integer below 16^digits as `digits` hex digits. */
const hex = (v: number, digits: number): string => v.toString(16).padStart(digits, "0");

/**
 * The id of the event at `pos` of batch (t0, q): UUIDv7-shaped, so ids sort by their batch's
 * time, then batch number, then position (time-sortable to the batch's first event, unique,
 * the same at every export). Layout (hex digits): t0 (12) | 7 | q bits 39-28 (3) | variant
 * 10 + q bits 27-26 | q bits 25-14 (3) | q bits 13-0, pos (16 bits), 18 zero bits (12).
 */
export function eventId(t0: number, q: number, pos: number): string {
  const t = hex(t0 % 2 ** 48, 12);
  const hi = Math.floor(q / 2 ** 28) % 0x1000;
  const v = 8 + (Math.floor(q / 2 ** 26) % 4);
  const mid = Math.floor(q / 2 ** 14) % 0x1000;
  // 48 bits: q's low 14 bits, pos (16), 18 zeros
  const low = (q % 2 ** 14) * 2 ** 34 + (pos % 0x10000) * 2 ** 18;
  return `${t.slice(0, 8)}-${t.slice(8)}-7${hex(hi, 3)}-${HEX[v]}${hex(mid, 3)}-${hex(low, 12)}`;
}

const ID =
  /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f])([0-9a-f]{3})-([0-9a-f])([0-9a-f]{3})-([0-9a-f]{12})$/;

/**
 * The batch time, batch number and position an event id names (for an id of the per-event log,
 * its time and meaningless bits). null: not an event id.
 */
export function parseEventId(id: string): { t0: number; q: number; pos: number } | null {
  const m = ID.exec(id);
  if (!m) return null;
  const t0 = Number.parseInt(`${m[1]}${m[2]}`, 16);
  const hi = Number.parseInt(m[4] as string, 16);
  const v = Number.parseInt(m[5] as string, 16) & 3;
  const mid = Number.parseInt(m[6] as string, 16);
  const low = Number.parseInt(m[7] as string, 16);
  const q = hi * 2 ** 28 + v * 2 ** 26 + mid * 2 ** 14 + Math.floor(low / 2 ** 34);
  const pos = Math.floor(low / 2 ** 18) % 0x10000;
  return { t0, q, pos };
}

/** The id of a batch's event (its explicit id, or derived). */
export const idOf = (b: Batch, pos: number): string =>
  b.ids ? (b.ids[pos] as string) : eventId(b.t0, b.q, pos);

/** Batch numbers: a random 20-bit prefix per process, then a counter (40 bits in all). */
let lastQ = Math.floor(Math.random() * 0x100000) * 0x100000;
export function mintQ(): number {
  lastQ = (lastQ + 1) % 2 ** 40;
  return lastQ;
}

/**
 * The next number for a batch whose id another batch holds: derived from its events, so the
 * same batch sent again lands on the same number (and is found there).
 */
export function nextQ(b: Batch): number {
  let h = 2166136261;
  for (let i = 0; i < b.n; i++) {
    h = Math.imul(h ^ ((b.at[i] as number) % 2 ** 32), 16777619);
    h = Math.imul(h ^ (b.lat[i] as number), 16777619);
    h = Math.imul(h ^ (b.status[i] as number), 16777619);
  }
  return (b.q + 1 + (h >>> 0)) % 2 ** 40;
}

/** An event's fixed fields as a batch holds them (string indexes, bucket index, µs). */
interface EventFields {
  key: number;
  tier: number;
  route: number;
  slug: number;
  variant: number;
  format: number;
  bucket: number;
  status: number;
  lat: number;
}

/**
 * Builds batches: strings interned per batch, events added in any order, then `done()` sorts
 * them by time and splits them per account and UTC day (and at MAX_BATCH_EVENTS).
 */
export class BatchBuilder {
  private strings: string[] = [];
  private index = new Map<string, number>();
  private rows: (EventFields & {
    account: string;
    at: number;
    count: number;
    miss: number[] | null;
    id: string | null;
  })[] = [];

  /** The index of a string (NONE for null). */
  ref(s: string | null | undefined): number {
    if (s === null || s === undefined) return NONE;
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.index.set(s, i);
    }
    return i;
  }

  add(
    account: string,
    at: number,
    fields: EventFields & { count?: number; miss?: number[] | null; id?: string | null },
  ): void {
    this.rows.push({
      account,
      at,
      key: fields.key,
      tier: fields.tier,
      route: fields.route,
      slug: fields.slug,
      variant: fields.variant,
      format: fields.format,
      bucket: fields.bucket,
      status: fields.status,
      lat: fields.lat,
      count: fields.count ?? 1,
      miss: fields.miss ?? null,
      id: fields.id ?? null,
    });
  }

  get size(): number {
    return this.rows.length;
  }

  /**
   * The batches: one per account and UTC day (split at MAX_BATCH_EVENTS), events by time (by
   * id for explicit ids), each with its own strings and a new batch number (`q`, or `mintQ`).
   */
  done(q: () => number = mintQ): Batch[] {
    const groups = new Map<string, typeof this.rows>();
    for (const r of this.rows) {
      const k = `${dayNo(r.at)}\u0000${r.account}`;
      let g = groups.get(k);
      if (!g) {
        g = [];
        groups.set(k, g);
      }
      g.push(r);
    }
    const out: Batch[] = [];
    for (const g of groups.values()) {
      const explicit = g[0]?.id !== null;
      if (explicit)
        g.sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : a.id === b.id ? 0 : 1));
      else g.sort((a, b) => a.at - b.at);
      for (let start = 0; start < g.length; start += MAX_BATCH_EVENTS) {
        const part = g.slice(start, start + MAX_BATCH_EVENTS);
        const b = emptyBatch((part[0] as (typeof g)[number]).account, part.length);
        const local = new Map<number, number>();
        const own = (i: number): number => {
          if (i === NONE) return NONE;
          let j = local.get(i);
          if (j === undefined) {
            j = b.strings.length;
            b.strings.push(this.strings[i] as string);
            local.set(i, j);
          }
          return j;
        };
        let counted = false;
        let missed = false;
        part.forEach((r, i) => {
          b.at[i] = r.at;
          b.key[i] = own(r.key);
          b.tier[i] = own(r.tier);
          b.route[i] = own(r.route);
          b.slug[i] = own(r.slug);
          b.variant[i] = own(r.variant);
          b.format[i] = own(r.format);
          b.bucket[i] = r.bucket;
          b.status[i] = r.status;
          b.lat[i] = r.lat;
          if (r.count !== 1) counted = true;
          if (r.miss && r.miss.length > 0) missed = true;
        });
        if (counted) b.count = Uint32Array.from(part, (r) => r.count);
        if (missed)
          b.miss = part.map((r) => (r.miss && r.miss.length > 0 ? r.miss.map(own) : null));
        if (explicit) b.ids = part.map((r) => r.id as string);
        let t0 = (part[0] as (typeof g)[number]).at;
        if (explicit) for (const r of part) if (r.at < t0) t0 = r.at;
        b.t0 = t0;
        b.q = q();
        out.push(b);
      }
    }
    this.rows = [];
    return out;
  }
}

/** An event's latency in µs as a Uint32 (a latency in ms, rounded; past the range, clamped). */
export const latencyUs = (ms: unknown): number =>
  typeof ms === "number" && ms > 0 ? Math.min(0xffffffff, Math.round(ms * 1000)) : 0;

/**
 * Events moved from the per-event layout (both stores) as batches that keep their ids, each
 * numbered from its first event's id: a move run again makes the same batches, found and
 * skipped.
 */
export function movedBatches(events: Iterable<UsageEvent>): Batch[] {
  const batches = batchesOfEvents(events, () => 0);
  for (const b of batches) b.q = idHash(b.ids?.[0] ?? "");
  return batches;
}

/** 40 bits of an id's hash (FNV-1a over its characters, two ways). */
function idHash(id: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    h1 = Math.imul(h1 ^ id.charCodeAt(i), 16777619);
    h2 = Math.imul(h2 ^ id.charCodeAt(i), 2246822519);
  }
  return ((h1 >>> 0) % 2 ** 20) * 2 ** 20 + ((h2 >>> 0) % 2 ** 20);
}

/**
 * Events of the per-event log (JSON, as stored or spilled by earlier versions) as batches that
 * keep their ids: per account and UTC day, ordered by id, numbered by `q` (default: mintQ).
 */
export function batchesOfEvents(events: Iterable<UsageEvent>, q?: () => number): Batch[] {
  const b = new BatchBuilder();
  for (const e of events) {
    const at = Date.parse(e.ts);
    if (!Number.isFinite(at)) continue;
    b.add(e.accountId, at, {
      key: b.ref(typeof e.keyId === "string" ? e.keyId : ""),
      tier: b.ref(typeof e.tier === "string" ? e.tier : ""),
      route: b.ref(typeof e.route === "string" ? e.route : ""),
      slug: b.ref(typeof e.slug === "string" ? e.slug : null),
      variant: b.ref(typeof e.variant === "string" ? e.variant : null),
      format: b.ref(typeof e.format === "string" ? e.format : null),
      bucket: bucketIndex(e.bucket),
      status: typeof e.status === "number" ? Math.max(0, Math.min(0xffff, e.status | 0)) : 0,
      lat: latencyUs(e.latencyMs),
      count: Number.isInteger(e.count) && (e.count as number) > 1 ? (e.count as number) : 1,
      miss: Array.isArray(e.miss)
        ? e.miss.filter((m): m is string => typeof m === "string").map((m) => b.ref(m))
        : null,
      id: e.id,
    });
  }
  return b.done(q);
}

/** The UsageEvent of a batch's event `i` (fields in the stored order, as the export lists them). */
export function eventAt(b: Batch, i: number): UsageEvent {
  const s = b.strings;
  const ref = (j: number) => (j === NONE ? null : (s[j] as string));
  const ts = new Date(b.at[i] as number).toISOString();
  const e = {
    id: idOf(b, i),
    ts,
    day: ts.slice(0, 10),
    accountId: b.account,
    keyId: ref(b.key[i] as number) ?? "",
    tier: (ref(b.tier[i] as number) ?? "") as Tier,
    bucket: bucketName(b.bucket[i] as number),
    route: ref(b.route[i] as number) ?? "",
    slug: ref(b.slug[i] as number),
    variant: ref(b.variant[i] as number),
  } as UsageEvent;
  const format = ref(b.format[i] as number);
  if (format !== null) e.format = format;
  const miss = b.miss?.[i];
  if (miss) e.miss = miss.map((j) => s[j] as string);
  e.status = b.status[i] as number;
  e.latencyMs = (b.lat[i] as number) / 1000;
  const count = b.count?.[i];
  if (count !== undefined && count > 1) e.count = count;
  return e;
}

/** Every event of a batch, in order. */
export function eventsOf(b: Batch): UsageEvent[] {
  const out: UsageEvent[] = new Array(b.n);
  for (let i = 0; i < b.n; i++) out[i] = eventAt(b, i);
  return out;
}

const VERSION = 1;
const HAS_COUNT = 1;
const HAS_MISS = 2;
const HAS_IDS = 4;

/** A batch as bytes, self-contained (its strings included): spill files, the write thread. */
export function encodeBatch(b: Batch, w = new ByteWriter(64 + b.n * 12)): Uint8Array {
  w.byte(VERSION);
  w.str(b.account);
  w.f64(b.t0);
  w.uint(b.q);
  w.uint(b.n);
  w.uint((b.count ? HAS_COUNT : 0) | (b.miss ? HAS_MISS : 0) | (b.ids ? HAS_IDS : 0));
  w.uint(b.strings.length);
  for (const s of b.strings) w.str(s);
  const n = b.n;
  for (let i = 0; i < n; i++) w.uint((b.at[i] as number) - b.t0);
  for (const col of [b.key, b.tier, b.route, b.slug, b.variant, b.format])
    for (let i = 0; i < n; i++) w.uint((col[i] as number) + 1);
  for (let i = 0; i < n; i++) w.byte(b.bucket[i] as number);
  for (let i = 0; i < n; i++) w.uint(b.status[i] as number);
  for (let i = 0; i < n; i++) w.uint(b.lat[i] as number);
  if (b.count) for (let i = 0; i < n; i++) w.uint(b.count[i] as number);
  if (b.miss)
    for (let i = 0; i < n; i++) {
      const m = b.miss[i];
      w.uint(m ? m.length : 0);
      if (m) for (const j of m) w.uint(j);
    }
  if (b.ids) for (let i = 0; i < n; i++) w.str(b.ids[i] as string);
  return w.done();
}

/**
 * The optional columns that end a batch's bytes (encodeBatch's, and the store rows' of rows.ts):
 * folded refusals' counts, misses (their string indexes mapped through `str`), explicit ids.
 */
export function readOptionalColumns(
  r: ByteReader,
  b: Batch,
  has: { count: boolean; miss: boolean; ids: boolean },
  str: (i: number) => number = (i) => i,
): void {
  const n = b.n;
  if (has.count) {
    b.count = new Uint32Array(n);
    for (let i = 0; i < n; i++) b.count[i] = r.uint();
  }
  if (has.miss) {
    b.miss = new Array(n);
    for (let i = 0; i < n; i++) {
      const k = r.uint();
      if (k === 0) {
        b.miss[i] = null;
        continue;
      }
      const m: number[] = [];
      for (let j = 0; j < k; j++) m.push(str(r.uint()));
      b.miss[i] = m;
    }
  }
  if (has.ids) {
    b.ids = [];
    for (let i = 0; i < n; i++) b.ids.push(r.str());
  }
}

/** A batch read back from encodeBatch's bytes (RangeError when they are cut short or not a batch). */
export function decodeBatch(bytes: Uint8Array): Batch {
  const r = new ByteReader(bytes);
  if (r.byte() !== VERSION) throw new RangeError("not a usage batch");
  const account = r.str();
  const t0 = r.f64();
  const q = r.uint();
  const n = r.uint();
  if (n > MAX_BATCH_EVENTS) throw new RangeError("batch too large");
  const flags = r.uint();
  const b = emptyBatch(account, n);
  b.t0 = t0;
  b.q = q;
  const ns = r.uint();
  for (let i = 0; i < ns; i++) b.strings.push(r.str());
  const explicit = (flags & HAS_IDS) !== 0;
  for (let i = 0; i < n; i++) b.at[i] = t0 + r.uint();
  for (const col of [b.key, b.tier, b.route, b.slug, b.variant, b.format])
    for (let i = 0; i < n; i++) col[i] = r.uint() - 1;
  for (let i = 0; i < n; i++) b.bucket[i] = r.byte();
  for (let i = 0; i < n; i++) b.status[i] = r.uint();
  for (let i = 0; i < n; i++) b.lat[i] = r.uint();
  readOptionalColumns(r, b, {
    count: (flags & HAS_COUNT) !== 0,
    miss: (flags & HAS_MISS) !== 0,
    ids: explicit,
  });
  for (const col of [b.key, b.tier, b.route, b.slug, b.variant, b.format])
    for (let i = 0; i < n; i++)
      if ((col[i] as number) >= ns) throw new RangeError("string index out of range");
  return b;
}

/**
 * Whether two batches hold the same events, field by field (a batch id found again in a store:
 * the same batch sent twice, or another one that happens to have its id).
 */
export function sameBatch(a: Batch, b: Batch): boolean {
  if (a.account !== b.account || a.n !== b.n || a.t0 !== b.t0 || a.q !== b.q) return false;
  const sa = (col: Int32Array, i: number) => (col[i] === NONE ? null : a.strings[col[i] as number]);
  const sb = (col: Int32Array, i: number) => (col[i] === NONE ? null : b.strings[col[i] as number]);
  const pairs = [
    [a.key, b.key],
    [a.tier, b.tier],
    [a.route, b.route],
    [a.slug, b.slug],
    [a.variant, b.variant],
    [a.format, b.format],
  ] as const;
  for (let i = 0; i < a.n; i++) {
    if (
      a.at[i] !== b.at[i] ||
      a.bucket[i] !== b.bucket[i] ||
      a.status[i] !== b.status[i] ||
      a.lat[i] !== b.lat[i] ||
      (a.count?.[i] ?? 1) !== (b.count?.[i] ?? 1) ||
      (a.ids?.[i] ?? null) !== (b.ids?.[i] ?? null)
    )
      return false;
    for (const [x, y] of pairs) if (sa(x, i) !== sb(y, i)) return false;
    const ma = (a.miss?.[i] ?? []).map((j) => a.strings[j]).join("\u0000");
    const mb = (b.miss?.[i] ?? []).map((j) => b.strings[j]).join("\u0000");
    if (ma !== mb) return false;
  }
  return true;
}

/**
 * Batches as one buffer of frames (the write thread's messages, spill files): each frame its
 * length, the CRC-32 of its bytes and the bytes (encodeBatch), so a frame torn by a crash
 * mid-write is told apart from a whole one.
 */
export function encodeFrames(batches: readonly Batch[]): Uint8Array {
  const w = new ByteWriter(64);
  const body = new ByteWriter(256);
  for (const b of batches) {
    body.pos = 0;
    const bytes = encodeBatch(b, body);
    w.uint(bytes.length);
    const crc = crc32(bytes);
    w.byte(crc & 0xff);
    w.byte((crc >>> 8) & 0xff);
    w.byte((crc >>> 16) & 0xff);
    w.byte((crc >>> 24) & 0xff);
    w.bytes(bytes);
  }
  return w.done();
}

/**
 * The batches of encodeFrames' bytes, up to the first frame that is cut short, zero (the unused
 * end of a spill reserve) or fails its CRC; `whole` tells whether the bytes ended cleanly.
 */
export function decodeFrames(bytes: Uint8Array): { batches: Batch[]; whole: boolean; end: number } {
  const r = new ByteReader(bytes);
  const batches: Batch[] = [];
  let end = 0;
  try {
    while (!r.end) {
      const len = r.uint();
      if (len === 0) return { batches, whole: false, end };
      const crc = (r.byte() | (r.byte() << 8) | (r.byte() << 16) | (r.byte() << 24)) >>> 0;
      const body = r.bytes(len);
      if (crc32(body) >>> 0 !== crc) return { batches, whole: false, end };
      batches.push(decodeBatch(body));
      end = r.pos;
    }
  } catch {
    return { batches, whole: false, end };
  }
  return { batches, whole: true, end };
}
