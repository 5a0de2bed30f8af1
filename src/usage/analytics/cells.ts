import { BUCKETS } from "../../quota/limits";
import type { UsageEvent } from "../event";

/**
 * The analytics projections' cells and their keys, shared by both store adapters:
 *  - cells: per account, UTC day (and UTC hour), rollup (see ROLLUPS) and group of the rollup's
 *    fields (bucket, key, brand, variant, format, exact status), the counts (requests, errors,
 *    rateLimited: the usage_daily rules) and a fixed latency histogram; at most TOP_BRANDS
 *    brands per account and period, the rest under OTHER_BRAND;
 *  - misses: per account, UTC day and miss (`domain:acme.test`, `slug:acme`, ...), the count.
 * Both stores keep them in their database: the embedded store as rows of usage_cells and
 * usage_misses (SQLite), the MongoDB store as one rollup document per cell and one per account,
 * day and miss (src/store/mongo/usage-rollups.ts). A read returns a fresh map of one view's
 * cells per period.
 */

/** A projection cell: counts and a latency histogram (bin index → requests). */
export interface Cell {
  /** requests */
  n: number;
  /** errors: 4xx/5xx other than 429 */
  e: number;
  /** rateLimited: 429 */
  r: number;
  /**
   * latency histogram as pairs [bin, requests, bin, requests, ...] (bins: latencyBin), only bins
   * with requests: far quicker to walk than an object keyed by bin
   */
  h: number[];
}

export type Granularity = "day" | "hour";

/** The group fields of a cell, in the order of its key. */
export interface CellGroup {
  bucket: string;
  /** the API key id ("" for a bearer-token caller) */
  key: string;
  brand: string | null;
  variant: string | null;
  format: string | null;
  status: number;
}

/** Lower bound of latency bin 1, in ms; bin 0 holds everything faster. */
const LAT_BASE = 0.05;
/** Each bin is this factor wider than the one before (a quantile is within ~10% of the truth). */
const LAT_FACTOR = 1.2;
/** Bins in all: the last one holds everything from about 2.4 minutes on. */
export const LAT_BINS = 80;
const LOG_FACTOR = Math.log(LAT_FACTOR);

/** The histogram bin of a latency in ms. */
export function latencyBin(ms: number): number {
  if (!(ms >= LAT_BASE)) return 0;
  return Math.min(LAT_BINS - 1, Math.floor(Math.log(ms / LAT_BASE) / LOG_FACTOR) + 1);
}

/** The value a bin stands for: its geometric middle (ms, two decimals). */
export function binValue(bin: number): number {
  const v = bin === 0 ? LAT_BASE / 2 : LAT_BASE * LAT_FACTOR ** (bin - 0.5);
  return Math.round(v * 100) / 100;
}

export const emptyCell = (): Cell => ({ n: 0, e: 0, r: 0, h: [] });

/** Add `n` requests to one bin of a histogram (pairs). */
function addToBin(h: number[], bin: number, n: number): void {
  for (let i = 0; i < h.length; i += 2)
    if (h[i] === bin) {
      h[i + 1] = (h[i + 1] as number) + n;
      return;
    }
  h.push(bin, n);
}

/** Count `n` requests of one status and latency bin into a cell (the usage_daily rules). */
export function countCell(c: Cell, status: number, bin: number, n: number): void {
  c.n += n;
  if (status === 429) c.r += n;
  else if (status >= 400) c.e += n;
  addToBin(c.h, bin, n);
}

const IMAGE_BUCKETS = new Set(["svg", "png", "webp"]);

/** The format of an event: recorded by the asset routes, else its image bucket (older events). */
export const formatOf = (e: Pick<UsageEvent, "format" | "bucket">): string | null =>
  typeof e.format === "string" ? e.format : IMAGE_BUCKETS.has(e.bucket) ? e.bucket : null;

/**
 * One part of a cell key: never containing the separator "|" (nor "." or a leading "$"). null
 * is "%" (a lone "%" is never an encoded value).
 */
const SAFE = /^[A-Za-z0-9_-]*$/;
export const enc = (v: string | null): string =>
  v === null ? "%" : SAFE.test(v) ? v : encodeURIComponent(v).replace(/\./g, "%2E");
const dec = (s: string): string | null =>
  s === "%" ? null : s === OTHER_MARK ? OTHER_BRAND : decodeURIComponent(s);

/**
 * Brands a period keeps cells of, per account: the first TOP_BRANDS distinct brands an
 * account's events of that UTC hour (hour views) or day (day views) name get their own cells;
 * the events of any later brand of the period are counted under the one brand OTHER_BRAND.
 * Events without a brand (null) always keep their own cells. So an account's brand-bearing
 * cells per period are bounded by TOP_BRANDS + 2 brands, whatever the variety of its traffic.
 */
export const TOP_BRANDS = 50;
/** The brand reads report for the events of brands past a period's TOP_BRANDS. */
export const OTHER_BRAND = "(other)";
/** OTHER_BRAND in a cell key: "%o" is never an encoded value (a "%" is followed by two hex digits). */
export const OTHER_MARK = "%o";

/** A brand (a lower-cased slug, null, or OTHER_BRAND) as encoded in cell keys. */
export const encBrand = (brand: string | null): string =>
  brand === OTHER_BRAND ? OTHER_MARK : enc(brand);

/** The brand part (encoded) of an `all` cell key: its first field. */
export const brandOfKey = (allKey: string): string => allKey.slice(0, allKey.indexOf("|"));

/** An `all` cell key with its brand counted under OTHER_BRAND. */
export const otherKey = (allKey: string): string => OTHER_MARK + allKey.slice(allKey.indexOf("|"));

/** The encoded brand parts whose cells are always kept (no brand), never counted against K. */
export const isUnbounded = (encodedBrand: string): boolean =>
  encodedBrand === "%" || encodedBrand === OTHER_MARK;

/** A cell's group fields that a rollup keeps (missing ones are summed over). */
export type GroupField = keyof CellGroup;

/**
 * Rollups: each keeps cells of a few group fields only, so a query reads the smallest one that
 * has the fields it groups or filters by (`all`, every field, is the fallback). A year of one
 * account in `bs` is at most 366 x 7 buckets x its statuses cells, whatever its brands and keys.
 */
export const ROLLUPS = {
  bs: ["bucket", "status"],
  k: ["key", "bucket", "status"],
  b: ["brand", "status"],
  vf: ["variant", "format", "bucket", "status"],
  // brand first: a brand= read seeks the brand's keys of each period
  all: ["brand", "bucket", "key", "variant", "format", "status"],
} as const satisfies Record<string, readonly GroupField[]>;
export type Rollup = keyof typeof ROLLUPS;
export const ROLLUP_NAMES = Object.keys(ROLLUPS) as Rollup[];

/** A granularity and rollup: the unit the stores keep cells by, e.g. "day.bs". */
export type View = `${Granularity}.${Rollup}`;
export const VIEWS: View[] = (["day", "hour"] as const).flatMap((g) =>
  ROLLUP_NAMES.map((r): View => `${g}.${r}`),
);

/** The views whose cell keys lead with the brand (a brand= read seeks them by prefix). */
export const BRAND_VIEWS: ReadonlySet<View> = new Set(
  VIEWS.filter((v) => (ROLLUPS[v.slice(v.indexOf(".") + 1) as Rollup][0] as string) === "brand"),
);

/** The smallest rollup holding every field in `fields`. */
export function rollupFor(fields: Iterable<GroupField>): Rollup {
  const need = [...fields];
  return (
    ROLLUP_NAMES.find((r) => need.every((f) => (ROLLUPS[r] as readonly string[]).includes(f))) ??
    "all"
  );
}

/**
 * The key of an event's `all` cell: its group fields (ROLLUPS.all order), encoded (slugs
 * lower-cased), joined by "|". Its brand is the event's own: the stores count it under
 * OTHER_BRAND (otherKey) in periods whose TOP_BRANDS are taken.
 */
export function allKey(
  e: Pick<UsageEvent, "keyId" | "slug" | "variant" | "format" | "bucket" | "status">,
): string {
  const key = enc(typeof e.keyId === "string" ? e.keyId : "");
  const brand = enc(typeof e.slug === "string" ? e.slug.toLowerCase() : null);
  const variant = enc(typeof e.variant === "string" ? e.variant : null);
  return `${brand}|${e.bucket}|${key}|${variant}|${enc(formatOf(e))}|${e.status}`;
}

/** The group fields of a cell key of a rollup (the others are absent). */
export function groupOf(rollup: Rollup, key: string): Partial<CellGroup> {
  const parts = key.split("|");
  const out: Partial<CellGroup> = {};
  ROLLUPS[rollup].forEach((f, i) => {
    const v = parts[i] as string;
    if (f === "status") out.status = Number(v);
    else if (f === "bucket") out.bucket = v;
    else if (f === "key") out.key = dec(v) ?? "";
    else out[f] = dec(v);
  });
  return out;
}

/** The misses an event records (only well-formed strings). */
export const missesOf = (e: UsageEvent): string[] =>
  Array.isArray(e.miss) ? e.miss.filter((m): m is string => typeof m === "string") : [];

/** Most periods one read asks for (ten years of days; of hours, five months). */
const MAX_PERIODS = 3660;

/**
 * The periods from..to: days (YYYY-MM-DD), or hours (YYYY-MM-DDTHH); at most MAX_PERIODS (no
 * query of the service asks for more).
 */
export function periodsBetween(from: string, to: string, hourly: boolean): string[] {
  const out: string[] = [];
  const step = hourly ? 3_600_000 : 86_400_000;
  const start = Date.parse(
    hourly ? `${from.slice(0, 13)}:00:00Z` : `${from.slice(0, 10)}T00:00:00Z`,
  );
  if (!Number.isFinite(start)) return out;
  for (let t = start; out.length < MAX_PERIODS; t += step) {
    const p = new Date(t).toISOString().slice(0, hourly ? 13 : 10);
    if (p > to) break;
    out.push(p);
  }
  return out;
}

/** Cells of one period: cell key → cell. */
export type PeriodCells = Map<string, Cell>;

/** A period's cells as read back for a query. */
export interface PeriodRow {
  t: string;
  cells: PeriodCells;
}

/** Filters a read may apply early (encoded as in cell keys); the caller filters again. */
export interface CellHint {
  brand?: string | null;
  key?: string;
  /** only these cell keys of the view (the top groups' cells of a two-pass grouped read) */
  keys?: readonly string[];
  /**
   * each period's cells summed into one cell, keyed "" (a series without filters or groups, the
   * totals of a two-pass read); set without the other fields. A store may ignore it.
   */
  summed?: true;
}

/** A cell key's requests and cells over a range (UsageEventStore.cellCounts). */
export interface KeyCount {
  /** requests */
  n: number;
  /** cells: the periods the key has one in */
  cells: number;
}

/** Add cell `c` into `into` (counts, and the histogram pairs bin by bin). */
export function addInto(into: Cell, c: Cell): void {
  into.n += c.n;
  into.e += c.e;
  into.r += c.r;
  for (let i = 0; i < c.h.length; i += 2) addToBin(into.h, c.h[i] as number, c.h[i + 1] as number);
}

const ALL_FIELDS: readonly GroupField[] = ROLLUPS.all;
/** positions of each rollup's fields in an `all` key */
const PICK = Object.fromEntries(
  ROLLUP_NAMES.map((r) => [r, ROLLUPS[r].map((f) => ALL_FIELDS.indexOf(f))]),
) as Record<Rollup, number[]>;

/** The key of an `all` cell in rollup `r`. */
export function rollupKey(allKey: string, r: Rollup): string {
  if (r === "all") return allKey;
  const parts = allKey.split("|");
  return PICK[r].map((i) => parts[i]).join("|");
}

const BUCKET_SET: ReadonlySet<string> = new Set(BUCKETS);

/**
 * An `all` cell key in the present field order: a key of the older layout (bucket, key, brand,
 * ...: its second field an API key id, never a bucket name) has its first three fields put in
 * ROLLUPS.all order; a present key (second field a bucket) is returned as it is, so a migration
 * interrupted half-way can run again.
 */
export function presentAllKey(key: string): string {
  const [first, second, third, ...rest] = key.split("|");
  if (BUCKET_SET.has(second as string)) return key;
  return [third, first, second, ...rest].join("|");
}

/** The key field (encoded) of an `all` cell key. */
const keyPart = (allKey: string): string => allKey.split("|")[2] as string;

/**
 * Which cell keys a hint keeps (null: every one): of a `keys` hint those keys (any view); of a
 * brand or key hint the `all` keys of that brand or key.
 */
export function hintFilter(hint?: CellHint): ((allKey: string) => boolean) | null {
  if (hint?.keys !== undefined) {
    const keys = new Set(hint.keys);
    return (k) => keys.has(k);
  }
  if (hint?.brand !== undefined) {
    const want = encBrand(hint.brand);
    return (k) => brandOfKey(k) === want;
  }
  if (hint?.key !== undefined) {
    const want = enc(hint.key);
    return (k) => keyPart(k) === want;
  }
  return null;
}

/**
 * What every `all` cell key a hint keeps contains: a brand hint its prefix (the brand and the
 * separator), a key hint its encoded key between two separators (a superset: the value may also
 * stand in another field). A store may pre-select keys by it, then hintFilter decides. null: no
 * hint.
 */
export function hintNeedle(hint?: CellHint): { prefix: string } | { inner: string } | null {
  if (hint?.brand !== undefined) return { prefix: `${encBrand(hint.brand)}|` };
  if (hint?.key !== undefined) return { inner: `|${enc(hint.key)}|` };
  return null;
}
