import type { UsageEvent } from "../port";

/**
 * The analytics projections, shared by both store adapters:
 *  - cells: per account, UTC day (and UTC hour) and group of bucket, key, brand, variant, format
 *    and exact status, the counts (requests, errors, rateLimited: the usage_daily rules) and a
 *    fixed latency histogram;
 *  - misses: per account, UTC day and miss (`domain:acme.test`, `slug:acme`, ...), the count.
 * The embedded store keeps them in memory; the MongoDB store writes each batch's deltas into
 * pre-aggregated documents (one per account, period and writer).
 */

/** A projection cell: counts and a latency histogram (bin index → requests). */
export interface Cell {
  /** requests */
  n: number;
  /** errors: 4xx/5xx other than 429 */
  e: number;
  /** rateLimited: 429 */
  r: number;
  /** latency histogram: bin (see latencyBin) → requests */
  h: Record<string, number>;
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

/** The q-quantile (0..1) of a histogram, or null when it is empty. */
export function quantile(h: Record<string, number>, q: number): number | null {
  let total = 0;
  for (const k in h) total += h[k] as number;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let bin = 0; bin < LAT_BINS; bin++) {
    seen += h[bin] ?? 0;
    if (seen >= rank) return binValue(bin);
  }
  return binValue(LAT_BINS - 1);
}

export const emptyCell = (): Cell => ({ n: 0, e: 0, r: 0, h: {} });

/** Add `more` into `into`. */
export function mergeCell(into: Cell, more: Cell): void {
  into.n += more.n;
  into.e += more.e;
  into.r += more.r;
  for (const k in more.h) into.h[k] = (into.h[k] ?? 0) + (more.h[k] as number);
}

/** Count `n` requests of one status and latency into a cell (the usage_daily rules). */
function countCell(c: Cell, status: number, latencyMs: number, n: number): void {
  c.n += n;
  if (status === 429) c.r += n;
  else if (status >= 400) c.e += n;
  const bin = latencyBin(latencyMs);
  c.h[bin] = (c.h[bin] ?? 0) + n;
}

const IMAGE_BUCKETS = new Set(["svg", "png", "webp"]);

/** The format of an event: recorded by the asset routes, else its image bucket (older events). */
export const formatOf = (e: Pick<UsageEvent, "format" | "bucket">): string | null =>
  typeof e.format === "string" ? e.format : IMAGE_BUCKETS.has(e.bucket) ? e.bucket : null;

/**
 * One part of a cell key: usable as a MongoDB field name (no ".", no leading "$") and never
 * containing the separator "|". null is "%" (a lone "%" is never an encoded value).
 */
const enc = (v: string | number | null): string =>
  v === null ? "%" : encodeURIComponent(String(v)).replace(/\./g, "%2E");
const dec = (s: string): string | null => (s === "%" ? null : decodeURIComponent(s));

/** The key of an event's cell: its group fields, encoded and joined by "|" (slugs lower-cased). */
export function cellKey(e: UsageEvent): string {
  const slug = typeof e.slug === "string" ? e.slug.toLowerCase() : null;
  const variant = typeof e.variant === "string" ? e.variant : null;
  const keyId = typeof e.keyId === "string" ? e.keyId : "";
  return `${e.bucket}|${enc(keyId)}|${enc(slug)}|${enc(variant)}|${enc(formatOf(e))}|${e.status}`;
}

/** The group fields of a cell key. */
export function groupOf(key: string): CellGroup {
  const [bucket, k, brand, variant, format, status] = key.split("|") as string[];
  return {
    bucket: bucket as string,
    key: dec(k as string) ?? "",
    brand: dec(brand as string),
    variant: dec(variant as string),
    format: dec(format as string),
    status: Number(status),
  };
}

/** A miss as a MongoDB field name (see enc). */
export const missKey = (miss: string) => enc(miss);
export const missOf = (key: string) => dec(key) ?? "";

/** The period of an event: its UTC day, or its UTC hour as YYYY-MM-DDTHH. */
export const periodOf = (e: Pick<UsageEvent, "ts" | "day">, g: Granularity): string =>
  g === "day" ? e.day : e.ts.slice(0, 13);

/** The misses an event records (only well-formed strings). */
export const missesOf = (e: UsageEvent): string[] =>
  Array.isArray(e.miss) ? e.miss.filter((m): m is string => typeof m === "string") : [];

/** Cells of one period: cell key → cell. */
export type PeriodCells = Map<string, Cell>;

/** One account's projections: period → cells, per granularity; day → miss → count. */
export interface AccountCells {
  day: Map<string, PeriodCells>;
  hour: Map<string, PeriodCells>;
  misses: Map<string, Map<string, number>>;
}

/** A period's cells as read back for a query. */
export interface PeriodRow {
  t: string;
  cells: PeriodCells;
}

function getOr<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    m.set(k, v);
  }
  return v;
}

/** The cells and misses of events, in memory: the embedded store's projection, a batch's delta. */
export class CellProjection {
  readonly accounts = new Map<string, AccountCells>();

  addAll(events: readonly UsageEvent[]): void {
    for (const e of events) this.add(e);
  }

  add(e: UsageEvent): void {
    const a = getOr(this.accounts, e.accountId, () => ({
      day: new Map(),
      hour: new Map(),
      misses: new Map(),
    }));
    const key = cellKey(e);
    const n = e.count ?? 1;
    const latency = typeof e.latencyMs === "number" ? e.latencyMs : 0;
    for (const g of ["day", "hour"] as const) {
      const cells = getOr(a[g], periodOf(e, g), () => new Map<string, Cell>());
      countCell(getOr(cells, key, emptyCell), e.status, latency, n);
    }
    const misses = missesOf(e);
    if (misses.length > 0) {
      const day = getOr(a.misses, e.day, () => new Map<string, number>());
      for (const m of misses) day.set(m, (day.get(m) ?? 0) + n);
    }
  }

  /** An account's periods from..to (inclusive, period strings) of one granularity. */
  periods(accountId: string, g: Granularity, from: string, to: string): PeriodRow[] {
    const out: PeriodRow[] = [];
    for (const [t, cells] of this.accounts.get(accountId)?.[g] ?? [])
      if (t >= from && t <= to) out.push({ t, cells });
    return out;
  }

  /** Miss counts of days from..to: of one account, or of every account (null). */
  misses(accountId: string | null, from: string, to: string): Map<string, number> {
    const out = new Map<string, number>();
    const accounts =
      accountId === null ? [...this.accounts.values()] : [this.accounts.get(accountId)];
    for (const a of accounts)
      for (const [day, misses] of a?.misses ?? [])
        if (day >= from && day <= to)
          for (const [m, n] of misses) out.set(m, (out.get(m) ?? 0) + n);
    return out;
  }

  clear(): void {
    this.accounts.clear();
  }
}
