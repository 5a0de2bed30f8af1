import { BUCKETS } from "../../quota/limits";
import type { UsageEvent } from "../event";

/**
 * The rules of the analytics projection, shared by both store adapters and the reads:
 *  - cells: per account, UTC day (and UTC hour), rollup (see ROLLUPS) and group of the rollup's
 *    fields (bucket, key, brand, variant, format, exact status), the counts (requests, errors,
 *    rateLimited: the usage_daily rules) and a fixed latency histogram; at most TOP_BRANDS
 *    brands per account and period, the rest under OTHER_BRAND (usage/log/period.ts folds batches
 *    into them);
 *  - cell keys as text (`enc`, `groupOf`, `allKey`, `rollupKey`): the counters' names in
 *    MongoDB's period documents, and the keys of the per-event log's cells (its migration);
 *  - misses: per account, UTC day and miss (`domain:acme.test`, `slug:acme`, ...), the count.
 */

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

const IMAGE_BUCKETS = new Set(["svg", "png", "webp"]);

/** The format of an event: recorded by the asset routes, else its image bucket (older events). */
const formatOf = (e: Pick<UsageEvent, "format" | "bucket">): string | null =>
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
