import { BUCKETS } from "../../quota/limits";
import {
  LAT_BINS,
  latencyBin,
  ROLLUP_NAMES,
  ROLLUPS,
  type Rollup,
  TOP_BRANDS,
} from "../analytics/cells";
import { type Batch, bucketName, dayNo, hourNo, NONE } from "./batch";
import { ByteReader, ByteWriter } from "./bytes";

/**
 * The analytics projection of one account in one period (a UTC day or hour): the cells of the
 * five rollups (analytics/cells.ts ROLLUPS) and the brands the period keeps. A batch is folded
 * into the day's and hours' PeriodCells of its account (`foldBatch`), once per flush: events of
 * the same group (hour, key, bucket, brand, variant, format, status) are summed first, then each
 * group is added to the ten cells it belongs to. Both stores keep them: the embedded one as one
 * row per account and period (`encodePeriod`, strings as the store's integer ids), MongoDB as one
 * document per account and period (its cells as `$inc` counters).
 */

/** The brand of events past a period's TOP_BRANDS (reads name it "(other)"). */
export const OTHER = Symbol("other brands");
export type Brand = string | null | typeof OTHER;
/** A cell's field value: a string (null: none), the OTHER brand, or the status (a number). */
export type FieldValue = string | null | number | typeof OTHER;

/** A cell: its rollup's field values (ROLLUPS order), counts and latency histogram pairs. */
export interface PCell {
  f: FieldValue[];
  /** requests */
  n: number;
  /** errors: 4xx/5xx other than 429 */
  e: number;
  /** rateLimited: 429 */
  r: number;
  /** [bin, requests, bin, requests, ...] */
  h: number[];
}

/** Each cell's fields as encodePeriod wrote them (the store's ids), made once per cell. */
const written = new WeakMap<PCell, number[]>();

/** A part of a map key for a field value. */
const part = (v: FieldValue): string =>
  v === null ? "\u0001" : v === OTHER ? "\u0002" : typeof v === "number" ? `#${v}` : v;
/** The map key of a cell's fields. */
export function cellKey(f: readonly FieldValue[]): string {
  let k = part(f[0] as FieldValue);
  for (let i = 1; i < f.length; i++) k += `\u0000${part(f[i] as FieldValue)}`;
  return k;
}

const BIN_LIMIT = LAT_BINS - 1;

function addBin(h: number[], bin: number, n: number) {
  for (let i = 0; i < h.length; i += 2)
    if (h[i] === bin) {
      h[i + 1] = (h[i + 1] as number) + n;
      return;
    }
  h.push(bin, n);
}

/** The cells of one account and period. */
export class PeriodCells {
  /** the brands that keep their own cells, in the order they were admitted */
  brands: string[] = [];
  private brandSet: Set<string> | null = null;
  /** per rollup (ROLLUP_NAMES order), cell key → cell */
  views: Map<string, PCell>[] = ROLLUP_NAMES.map(() => new Map());

  /** Whether a brand keeps its own cells here, admitting it while there is room (TOP_BRANDS). */
  admit(brand: string | null): Brand {
    if (brand === null) return null;
    this.brandSet ??= new Set(this.brands);
    if (this.brandSet.has(brand)) return brand;
    if (this.brands.length >= TOP_BRANDS) return OTHER;
    this.brands.push(brand);
    this.brandSet.add(brand);
    return brand;
  }

  /** Add counts into the cell of `fields` in rollup `v` (made if new). */
  add(v: number, fields: FieldValue[], n: number, e: number, r: number, h: readonly number[]) {
    this.addKeyed(v, cellKey(fields), () => fields, n, e, r, h);
  }

  /** add, the cell's key made already; its fields made only for a new cell */
  addKeyed(
    v: number,
    k: string,
    fields: () => FieldValue[],
    n: number,
    e: number,
    r: number,
    h: readonly number[],
  ) {
    const map = this.views[v] as Map<string, PCell>;
    let c = map.get(k);
    if (!c) {
      c = { f: fields(), n: 0, e: 0, r: 0, h: [] };
      map.set(k, c);
    }
    c.n += n;
    c.e += e;
    c.r += r;
    if (h.length === 2) addBin(c.h, h[0] as number, h[1] as number);
    else for (let i = 0; i < h.length; i += 2) addBin(c.h, h[i] as number, h[i + 1] as number);
  }

  /** Add every cell of `other` into this one (its brands admitted after these). */
  merge(other: PeriodCells): void {
    for (const b of other.brands) this.admit(b);
    other.views.forEach((m, v) => {
      for (const c of m.values()) this.add(v, c.f, c.n, c.e, c.r, c.h);
    });
  }

  get empty(): boolean {
    return this.views.every((m) => m.size === 0);
  }
}

/** Field positions in an `all` cell (ROLLUPS.all: brand, bucket, key, variant, format, status). */
const ALL = ROLLUPS.all;
const PICK: number[][] = ROLLUP_NAMES.map((r) =>
  ROLLUPS[r].map((f) => (ALL as readonly string[]).indexOf(f)),
);
const IMAGE = new Set(["svg", "png", "webp"]);

/** A group of a batch's events that share every field of a cell and their hour. */
interface Group {
  hour: number;
  brand: string | null;
  /** the `all` fields, brand slot filled per period */
  all: FieldValue[];
  /** each rollup's cell key (cellKey), with the brand's own cells and with OTHER: made once */
  keys: [string[] | null, string[] | null];
  n: number;
  e: number;
  r: number;
  h: number[];
}

/**
 * The groups of a batch's events (first-seen order, so brands are admitted in event order):
 * events sharing their hour and cell fields summed, with the usage_daily rules for errors and
 * rate-limited requests and the latency histogram.
 */
export function groupsOf(b: Batch): Group[] {
  const s = b.strings;
  // per batch string: the brand it names (lower-cased slug)
  const lower = new Map<number, string>();
  // groups by two numbers of batch-local indexes (hour of day, bucket, status, key | variant,
  // format, slug), or by text when an index is too large for them
  const groups = new Map<number, Map<number, Group>>();
  const wide = new Map<string, Group>();
  const out: Group[] = [];
  for (let i = 0; i < b.n; i++) {
    const at = b.at[i] as number;
    const hour = hourNo(at);
    const slug = b.slug[i] as number;
    let brand: string | null = null;
    if (slug !== NONE) {
      brand = lower.get(slug) ?? null;
      if (brand === null) {
        brand = (s[slug] as string).toLowerCase();
        lower.set(slug, brand);
      }
    }
    const bucket = b.bucket[i] as number;
    const status = b.status[i] as number;
    const key = b.key[i] as number;
    const variant = b.variant[i] as number;
    const format = b.format[i] as number;
    let g: Group | undefined;
    let inner: Map<number, Group> | undefined;
    let k2 = 0;
    const narrow = key < 1023 && variant < 1023 && format < 1023 && slug < 1023 && status < 1024;
    if (narrow) {
      const k1 = (((hour % 24) * 8 + bucket) * 1024 + status) * 1024 + key + 1;
      k2 = ((variant + 1) * 1024 + format + 1) * 1024 + slug + 1;
      inner = groups.get(k1);
      if (!inner) {
        inner = new Map();
        groups.set(k1, inner);
      }
      g = inner.get(k2);
    } else g = wide.get(`${hour}|${bucket}|${status}|${key}|${variant}|${format}|${slug}`);
    if (!g) {
      const bname = bucketName(bucket);
      g = {
        hour,
        brand,
        all: [
          brand,
          bname,
          key === NONE ? "" : (s[key] as string),
          variant === NONE ? null : (s[variant] as string),
          format !== NONE ? (s[format] as string) : IMAGE.has(bname) ? bname : null,
          status,
        ],
        keys: [null, null],
        n: 0,
        e: 0,
        r: 0,
        h: [],
      };
      if (inner) inner.set(k2, g);
      else wide.set(`${hour}|${bucket}|${status}|${key}|${variant}|${format}|${slug}`, g);
      out.push(g);
    }
    const n = b.count ? (b.count[i] as number) : 1;
    g.n += n;
    if (status === 429) g.r += n;
    else if (status >= 400) g.e += n;
    addBin(g.h, Math.min(BIN_LIMIT, latencyBin((b.lat[i] as number) / 1000)), n);
  }
  return out;
}

/** The PeriodCells a fold reads and writes: of the batch's account, by day or hour number. */
export interface PeriodSource {
  day(day: number): PeriodCells;
  hour(hour: number): PeriodCells;
}

/**
 * Fold a batch into its account's periods: each group counted in the five rollups of its day
 * and of its hour, its brand admitted (or counted under OTHER) per period. Hours for which
 * `source.hour` answers null (past the age hourly cells are kept) are left out.
 */
export function foldBatch(
  b: Batch,
  source: { day(d: number): PeriodCells; hour(h: number): PeriodCells | null },
) {
  const day = source.day(dayNo(b.t0));
  for (const g of groupsOf(b)) {
    addGroup(day, g);
    const hour = source.hour(g.hour);
    if (hour) addGroup(hour, g);
  }
}

function addGroup(p: PeriodCells, g: Group) {
  const brand = p.admit(g.brand);
  const other = brand === OTHER ? 1 : 0;
  let keys = g.keys[other];
  if (!keys) {
    const all = g.all.slice();
    all[0] = brand;
    keys = PICK.map((pick) => cellKey(pick.map((i) => all[i] as FieldValue)));
    g.keys[other] = keys;
  }
  for (let v = 0; v < PICK.length; v++)
    p.addKeyed(
      v,
      keys[v] as string,
      () => {
        const all = g.all.slice();
        all[0] = brand;
        return (PICK[v] as number[]).map((i) => all[i] as FieldValue);
      },
      g.n,
      g.e,
      g.r,
      g.h,
    );
}

/** The misses of a batch: miss → requests. */
export function missesOfBatch(b: Batch): Map<string, number> {
  const out = new Map<string, number>();
  if (!b.miss) return out;
  for (let i = 0; i < b.n; i++) {
    const m = b.miss[i];
    if (!m) continue;
    const n = b.count ? (b.count[i] as number) : 1;
    for (const j of m) {
      const miss = b.strings[j] as string;
      out.set(miss, (out.get(miss) ?? 0) + n);
    }
  }
  return out;
}

/** Maps strings to the integers a store keeps them as, and back. */
export interface StringIds {
  id(s: string): number;
  str(id: number): string;
}

const VERSION = 1;
/** How a cell field is written: a string id, the bucket, the status. */
const KIND: Record<string, "s" | "b" | "n"> = {
  brand: "s",
  key: "s",
  variant: "s",
  format: "s",
  bucket: "b",
  status: "n",
};
const KINDS: ("s" | "b" | "n")[][] = ROLLUP_NAMES.map((r) =>
  ROLLUPS[r].map((f) => KIND[f] as "s" | "b" | "n"),
);
const BUCKET_NO = new Map<string, number>(BUCKETS.map((b, i) => [b, i]));

/**
 * A period's cells as bytes, strings as the store's ids (+2: 0 is null, 1 the OTHER brand):
 * the admitted brands, then each rollup's cells, each rollup prefixed by its length so a read
 * of one rollup skips the others.
 */
const ALL_NO = ROLLUP_NAMES.indexOf("all");

/** A cell's fields as a row holds them (the store's ids + 2; 0 null; 1 OTHER), made once. */
function writtenOf(c: PCell, kinds: ("s" | "b" | "n")[], ids: StringIds): number[] {
  let w = written.get(c);
  if (w) return w;
  w = new Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) {
    const x = c.f[i] as FieldValue;
    const kind = kinds[i];
    w[i] =
      kind === "s"
        ? x === null
          ? 0
          : x === OTHER
            ? 1
            : ids.id(x as string) + 2
        : kind === "b"
          ? (BUCKET_NO.get(x as string) ?? 0)
          : (x as number);
  }
  written.set(c, w);
  return w;
}

/** Scratch writers of encodePeriod (grown once, reused: rows are encoded one at a time). */
const whole = new ByteWriter(1 << 16);
const section = new ByteWriter(1 << 16);

export function encodePeriod(p: PeriodCells, ids: StringIds): Uint8Array {
  const w = whole;
  w.pos = 0;
  w.byte(VERSION);
  w.uint(p.brands.length);
  for (const b of p.brands) w.uint(ids.id(b));
  p.views.forEach((m, v) => {
    section.pos = 0;
    const kinds = KINDS[v] as ("s" | "b" | "n")[];
    section.uint(m.size);
    let cells: Iterable<PCell> = m.values();
    if (v === ALL_NO) {
      // by brand, with a directory (brand, first cell's offset, cells): a brand= read seeks it
      const list = [...m.values()];
      const enc = list.map((c) => writtenOf(c, kinds, ids));
      const order = list
        .map((_, i) => i)
        .sort((a, b) => (enc[a]?.[0] as number) - (enc[b]?.[0] as number));
      cells = order.map((i) => list[i] as PCell);
      const dir: [number, number][] = [];
      for (const i of order) {
        const brand = enc[i]?.[0] as number;
        const last = dir[dir.length - 1];
        if (last && last[0] === brand) last[1]++;
        else dir.push([brand, 1]);
      }
      section.uint(dir.length);
      for (const [brand, n] of dir) {
        section.uint(brand);
        section.uint(n);
      }
    }
    for (const c of cells) {
      const ids_ = writtenOf(c, kinds, ids);
      for (let i = 0; i < kinds.length; i++) {
        if (kinds[i] === "b") section.byte(ids_[i] as number);
        else section.uint(ids_[i] as number);
      }
      section.uint(c.n);
      section.uint(c.e);
      section.uint(c.r);
      section.uint(c.h.length / 2);
      for (let i = 0; i < c.h.length; i += 2) {
        section.byte(c.h[i] as number);
        section.uint(c.h[i + 1] as number);
      }
    }
    const bytes = section.done();
    w.uint(bytes.length);
    w.bytes(bytes);
  });
  // a copy: the scratch is reused by the next row
  return w.done().slice();
}

/** The string ids a period row refers to (so a reader can resolve them in one query). */
export function periodIds(bytes: Uint8Array, only?: number): Set<number> {
  const out = new Set<number>();
  const r = new ByteReader(bytes);
  r.byte();
  const nb = r.uint();
  for (let i = 0; i < nb; i++) out.add(r.uint());
  for (let v = 0; v < ROLLUP_NAMES.length; v++) {
    const len = r.uint();
    if (only !== undefined && v !== only) {
      r.pos += len;
      continue;
    }
    const end = r.pos + len;
    const kinds = KINDS[v] as ("s" | "b" | "n")[];
    const count = r.uint();
    if (v === ALL_NO) skipDirectory(r);
    for (let c = 0; c < count; c++) {
      for (const kind of kinds) {
        if (kind === "b") r.byte();
        else {
          const x = r.uint();
          if (kind === "s" && x >= 2) out.add(x - 2);
        }
      }
      r.uint();
      r.uint();
      r.uint();
      const pairs = r.uint();
      for (let i = 0; i < pairs; i++) {
        r.byte();
        r.uint();
      }
    }
    r.pos = end;
  }
  return out;
}

/** A period row read back (all rollups, or only rollup `only`: the others left empty). */
export function decodePeriod(bytes: Uint8Array, ids: StringIds, only?: number): PeriodCells {
  const p = new PeriodCells();
  const r = new ByteReader(bytes);
  if (r.byte() !== VERSION) throw new RangeError("not a usage period row");
  const nb = r.uint();
  for (let i = 0; i < nb; i++) p.brands.push(ids.str(r.uint()));
  for (let v = 0; v < ROLLUP_NAMES.length; v++) {
    const len = r.uint();
    if (only !== undefined && v !== only) {
      r.pos += len;
      continue;
    }
    const kinds = KINDS[v] as ("s" | "b" | "n")[];
    const map = p.views[v] as Map<string, PCell>;
    const count = r.uint();
    if (v === ALL_NO) skipDirectory(r);
    for (let c = 0; c < count; c++) {
      const f: FieldValue[] = new Array(kinds.length);
      for (let i = 0; i < kinds.length; i++) {
        const kind = kinds[i];
        if (kind === "b") f[i] = BUCKETS[r.byte()] ?? "svg";
        else if (kind === "n") f[i] = r.uint();
        else {
          const x = r.uint();
          f[i] = x === 0 ? null : x === 1 ? OTHER : ids.str(x - 2);
        }
      }
      const n = r.uint();
      const e = r.uint();
      const rl = r.uint();
      const pairs = r.uint();
      const h: number[] = new Array(pairs * 2);
      for (let i = 0; i < pairs; i++) {
        h[2 * i] = r.byte();
        h[2 * i + 1] = r.uint();
      }
      map.set(cellKey(f), { f, n, e, r: rl, h });
    }
  }
  return p;
}

function skipDirectory(r: ByteReader) {
  const n = r.uint();
  for (let i = 0; i < 2 * n; i++) r.uint();
}

/**
 * The cells of one rollup of a period row, for a read: as a list (no map, no keys), of one brand
 * only when `brand` is given (the row's encoding of it: store id + 2, 0 none, 1 OTHER; the `all`
 * rollup seeks it by its directory). `ids` must resolve every id the cells name
 * (periodIds).
 */
export function readCells(
  bytes: Uint8Array,
  ids: StringIds,
  v: number,
  brand?: number,
  out: PCell[] = [],
): PCell[] {
  const r = new ByteReader(bytes);
  if (r.byte() !== VERSION) throw new RangeError("not a usage period row");
  const nb = r.uint();
  for (let i = 0; i < nb; i++) r.uint();
  for (let k = 0; k < v; k++) {
    const len = r.uint();
    r.pos += len;
  }
  r.uint();
  const kinds = KINDS[v] as ("s" | "b" | "n")[];
  let count = r.uint();
  let skip = 0;
  if (v === ALL_NO) {
    const dirs = r.uint();
    let before = 0;
    let found = -1;
    for (let i = 0; i < dirs; i++) {
      const b = r.uint();
      const n = r.uint();
      if (brand !== undefined && found < 0) {
        if (b === brand) found = n;
        else before += n;
      }
    }
    if (brand !== undefined) {
      if (found < 0) return out;
      skip = before;
      count = before + found;
    }
  }
  for (let c = 0; c < count; c++) {
    const keep = c >= skip;
    const f: FieldValue[] | null = keep ? new Array(kinds.length) : null;
    let mine = true;
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[i];
      if (kind === "b") {
        const x = r.byte();
        if (f) f[i] = BUCKETS[x] ?? "svg";
      } else if (kind === "n") {
        const x = r.uint();
        if (f) f[i] = x;
      } else {
        const x = r.uint();
        if (i === 0 && brand !== undefined && x !== brand) mine = false;
        if (f) f[i] = x === 0 ? null : x === 1 ? OTHER : ids.str(x - 2);
      }
    }
    const n = r.uint();
    const e = r.uint();
    const rl = r.uint();
    const pairs = r.uint();
    const h: number[] | null = keep && mine ? new Array(pairs * 2) : null;
    for (let i = 0; i < pairs; i++) {
      const bin = r.byte();
      const x = r.uint();
      if (h) {
        h[2 * i] = bin;
        h[2 * i + 1] = x;
      }
    }
    if (f && h) out.push({ f, n, e, r: rl, h });
  }
  return out;
}

/** The rollup number of a rollup name (its place in ROLLUP_NAMES). */
export const rollupNo = (r: Rollup): number => ROLLUP_NAMES.indexOf(r);
