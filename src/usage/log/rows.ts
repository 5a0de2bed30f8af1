import { type Batch, emptyBatch, NONE, readOptionalColumns } from "./batch";
import { ByteReader, ByteWriter } from "./bytes";
import type { StringIds } from "./period";

/**
 * The embedded store's log row: one batch (or several consecutive batches of one account, each
 * a run), its strings as the store's integer ids. Events are written column by column: each
 * event's shape (key, tier, route, variant, format, bucket, status: a handful per row) as an
 * index into the row's shape table, then slug, time and latency, then the optional columns
 * (folded counts, misses, explicit ids). A row of one event is about 20 bytes; of many, 5 to 7
 * bytes an event.
 */

const VERSION = 1;
/** Flags of a row: optional columns present. */
export const HAS_COUNT = 1;
export const HAS_MISS = 2;
export const HAS_IDS = 4;

/** A run of a row: the events of one batch (its time, number and count). */
export interface Run {
  t0: number;
  q: number;
  n: number;
}

/** One batch as a row's bytes (a row of one run: its t0 and q are the row's key). */
export function encodeRow(b: Batch, ids: StringIds): Uint8Array {
  const w = new ByteWriter(32 + b.n * 8);
  w.byte(VERSION);
  // runs: one (the first run's t0 and q are the row's key)
  w.uint(1);
  w.uint(b.n);
  const flags = (b.count ? HAS_COUNT : 0) | (b.miss ? HAS_MISS : 0) | (b.ids ? HAS_IDS : 0);
  w.uint(flags);
  const sid = new Map<number, number>();
  const id = (j: number): number => {
    if (j === NONE) return 0;
    let v = sid.get(j);
    if (v === undefined) {
      v = ids.id(b.strings[j] as string) + 1;
      sid.set(j, v);
    }
    return v;
  };
  // the shapes
  const shapes = new Map<string, number>();
  const shapeOf = new Uint32Array(b.n);
  const list: number[][] = [];
  for (let i = 0; i < b.n; i++) {
    const s = [
      id(b.key[i] as number),
      id(b.tier[i] as number),
      id(b.route[i] as number),
      id(b.variant[i] as number),
      id(b.format[i] as number),
      b.bucket[i] as number,
      b.status[i] as number,
    ];
    const k = s.join(",");
    let x = shapes.get(k);
    if (x === undefined) {
      x = list.length;
      list.push(s);
      shapes.set(k, x);
    }
    shapeOf[i] = x;
  }
  w.uint(list.length);
  for (const s of list) for (const v of s) w.uint(v);
  if (list.length > 1) for (let i = 0; i < b.n; i++) w.uint(shapeOf[i] as number);
  for (let i = 0; i < b.n; i++) w.uint(id(b.slug[i] as number));
  for (let i = 0; i < b.n; i++) w.uint((b.at[i] as number) - b.t0);
  for (let i = 0; i < b.n; i++) w.uint(b.lat[i] as number);
  if (b.count) for (let i = 0; i < b.n; i++) w.uint(b.count[i] as number);
  if (b.miss)
    for (let i = 0; i < b.n; i++) {
      const m = b.miss[i];
      w.uint(m ? m.length : 0);
      if (m) for (const j of m) w.uint(id(j));
    }
  if (b.ids) for (let i = 0; i < b.n; i++) w.str(b.ids[i] as string);
  return w.done();
}

/** The store ids a row refers to (resolved before decodeRow). */
export function rowIds(bytes: Uint8Array): Set<number> {
  const out = new Set<number>();
  const r = new ByteReader(bytes);
  r.byte();
  const runs = r.uint();
  let n = r.uint();
  for (let k = 1; k < runs; k++) {
    r.uint();
    r.uint();
    n += r.uint();
  }
  const flags = r.uint();
  const shapes = r.uint();
  for (let s = 0; s < shapes; s++)
    for (let v = 0; v < 7; v++) {
      const x = r.uint();
      if (v < 5 && x > 0) out.add(x - 1);
    }
  if (shapes > 1) for (let i = 0; i < n; i++) r.uint();
  for (let i = 0; i < n; i++) {
    const x = r.uint();
    if (x > 0) out.add(x - 1);
  }
  for (let i = 0; i < 2 * n; i++) r.uint();
  if (flags & HAS_COUNT) for (let i = 0; i < n; i++) r.uint();
  if (flags & HAS_MISS)
    for (let i = 0; i < n; i++) {
      const k = r.uint();
      for (let j = 0; j < k; j++) out.add(r.uint() - 1);
    }
  return out;
}

/**
 * A row read back as one batch per run (`account`, and the row key's t0 and q for its first
 * run); strings resolved through `ids` (every id of rowIds must resolve).
 */
export function decodeRow(
  bytes: Uint8Array,
  account: string,
  t: number,
  q: number,
  ids: StringIds,
): Batch[] {
  const r = new ByteReader(bytes);
  if (r.byte() !== VERSION) throw new RangeError("not a usage log row");
  const nruns = r.uint();
  const runs: Run[] = [{ t0: t, q, n: r.uint() }];
  for (let k = 1; k < nruns; k++) {
    const prev = runs[k - 1] as Run;
    runs.push({ t0: prev.t0 + r.uint(), q: r.uint(), n: r.uint() });
  }
  let n = 0;
  for (const run of runs) n += run.n;
  const flags = r.uint();
  // the whole row decoded as one batch, then cut into its runs
  const b = emptyBatch(account, n);
  const strings = new Map<number, number>();
  const local = (x: number): number => {
    if (x === 0) return NONE;
    let j = strings.get(x);
    if (j === undefined) {
      j = b.strings.length;
      b.strings.push(ids.str(x - 1));
      strings.set(x, j);
    }
    return j;
  };
  const nshapes = r.uint();
  const shapes: number[][] = [];
  for (let s = 0; s < nshapes; s++) {
    const v: number[] = [];
    for (let k = 0; k < 7; k++) v.push(r.uint());
    shapes.push([
      local(v[0] as number),
      local(v[1] as number),
      local(v[2] as number),
      local(v[3] as number),
      local(v[4] as number),
      v[5] as number,
      v[6] as number,
    ]);
  }
  for (let i = 0; i < n; i++) {
    const s = (nshapes > 1 ? shapes[r.uint()] : shapes[0]) as number[];
    b.key[i] = s[0] as number;
    b.tier[i] = s[1] as number;
    b.route[i] = s[2] as number;
    b.variant[i] = s[3] as number;
    b.format[i] = s[4] as number;
    b.bucket[i] = s[5] as number;
    b.status[i] = s[6] as number;
  }
  for (let i = 0; i < n; i++) b.slug[i] = local(r.uint());
  // times relative to their run's t0
  let i = 0;
  for (const run of runs) for (let j = 0; j < run.n; j++, i++) b.at[i] = run.t0 + r.uint();
  for (let i = 0; i < n; i++) b.lat[i] = r.uint();
  readOptionalColumns(
    r,
    b,
    {
      count: (flags & HAS_COUNT) !== 0,
      miss: (flags & HAS_MISS) !== 0,
      ids: (flags & HAS_IDS) !== 0,
    },
    local,
  );
  if (runs.length === 1) {
    b.t0 = t;
    b.q = q;
    return [b];
  }
  return runs.map((run, k) =>
    sliceBatch(
      b,
      runs.slice(0, k).reduce((s, x) => s + x.n, 0),
      run,
    ),
  );
}

/** Events start..start+run.n of `b` as a batch of their own. */
function sliceBatch(b: Batch, start: number, run: Run): Batch {
  const end = start + run.n;
  return {
    ...b,
    t0: run.t0,
    q: run.q,
    n: run.n,
    at: b.at.slice(start, end),
    key: b.key.slice(start, end),
    tier: b.tier.slice(start, end),
    route: b.route.slice(start, end),
    slug: b.slug.slice(start, end),
    variant: b.variant.slice(start, end),
    format: b.format.slice(start, end),
    bucket: b.bucket.slice(start, end),
    status: b.status.slice(start, end),
    lat: b.lat.slice(start, end),
    count: b.count ? b.count.slice(start, end) : null,
    miss: b.miss ? b.miss.slice(start, end) : null,
    ids: b.ids ? b.ids.slice(start, end) : null,
  };
}
