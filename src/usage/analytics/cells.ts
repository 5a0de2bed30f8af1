import type { UsageEvent } from "../port";

/**
 * The analytics projections, shared by both store adapters:
 *  - cells: per account, UTC day (and UTC hour), rollup (see ROLLUPS) and group of the rollup's
 *    fields (bucket, key, brand, variant, format, exact status), the counts (requests, errors,
 *    rateLimited: the usage_daily rules) and a fixed latency histogram;
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
export function addToBin(h: number[], bin: number, n: number): void {
  for (let i = 0; i < h.length; i += 2)
    if (h[i] === bin) {
      h[i + 1] = (h[i + 1] as number) + n;
      return;
    }
  h.push(bin, n);
}

/** Count `n` requests of one status and latency bin into a cell (the usage_daily rules). */
function countCell(c: Cell, status: number, bin: number, n: number): void {
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
 * One part of a cell key: usable as a MongoDB field name (no ".", no leading "$") and never
 * containing the separator "|". null is "%" (a lone "%" is never an encoded value).
 */
const SAFE = /^[A-Za-z0-9_-]*$/;
const enc = (v: string | null): string =>
  v === null ? "%" : SAFE.test(v) ? v : encodeURIComponent(v).replace(/\./g, "%2E");
const dec = (s: string): string | null => (s === "%" ? null : decodeURIComponent(s));

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
  all: ["bucket", "key", "brand", "variant", "format", "status"],
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

/** An event's group fields, encoded for cell keys (slugs lower-cased). */
function encodedFields(e: UsageEvent): Record<GroupField, string> {
  return {
    bucket: e.bucket,
    status: String(e.status),
    key: enc(typeof e.keyId === "string" ? e.keyId : ""),
    brand: enc(typeof e.slug === "string" ? e.slug.toLowerCase() : null),
    variant: enc(typeof e.variant === "string" ? e.variant : null),
    format: enc(formatOf(e)),
  };
}

/** The keys of an event's cells, one per rollup (ROLLUP_NAMES order): fields joined by "|". */
export function cellKeys(e: UsageEvent): string[] {
  const v = encodedFields(e);
  return ROLLUP_NAMES.map((r) => {
    const fields = ROLLUPS[r];
    let key = v[fields[0]];
    for (let i = 1; i < fields.length; i++) key += `|${v[fields[i] as GroupField]}`;
    return key;
  });
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

/** A miss as a MongoDB field name (see enc). */
export const missKey = (miss: string) => enc(miss);
export const missOf = (key: string) => dec(key) ?? "";

/** The misses an event records (only well-formed strings). */
export const missesOf = (e: UsageEvent): string[] =>
  Array.isArray(e.miss) ? e.miss.filter((m): m is string => typeof m === "string") : [];

/** Cells of one period: cell key → cell. */
export type PeriodCells = Map<string, Cell>;

/** One account's projections: view → period → cells; day → miss → count. */
export interface AccountCells {
  views: Map<View, Map<string, PeriodCells>>;
  misses: Map<string, Map<string, number>>;
  /** the cells of each rollup (ROLLUP_NAMES order) of the last day and hour counted into */
  last: { day: string; dayCells: PeriodCells[]; hour: string; hourCells: PeriodCells[] };
}

const DAY_VIEWS = ROLLUP_NAMES.map((r): View => `day.${r}`);
const HOUR_VIEWS = ROLLUP_NAMES.map((r): View => `hour.${r}`);

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
  /** one copy of each distinct cell key, shared by every period that has the cell */
  private keys = new Map<string, string>();

  addAll(events: readonly UsageEvent[]): void {
    for (const e of events) this.add(e);
  }

  add(e: UsageEvent): void {
    let a = this.accounts.get(e.accountId);
    if (!a) {
      a = {
        views: new Map(),
        misses: new Map(),
        last: { day: "", dayCells: [], hour: "", hourCells: [] },
      };
      this.accounts.set(e.accountId, a);
    }
    const n = e.count ?? 1;
    const bin = latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0);
    const last = a.last;
    // events come in time order: most share the account's last day and hour
    if (last.day !== e.day) {
      last.day = e.day;
      last.dayCells = this.periodCells(a, DAY_VIEWS, e.day);
    }
    const hour = e.ts.slice(0, 13);
    if (last.hour !== hour) {
      last.hour = hour;
      last.hourCells = this.periodCells(a, HOUR_VIEWS, hour);
    }
    const keys = cellKeys(e);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      countCell(this.cell(last.dayCells[i] as PeriodCells, key), e.status, bin, n);
      countCell(this.cell(last.hourCells[i] as PeriodCells, key), e.status, bin, n);
    }
    const misses = missesOf(e);
    if (misses.length > 0) {
      const day = getOr(a.misses, e.day, () => new Map<string, number>());
      for (const m of misses) day.set(m, (day.get(m) ?? 0) + n);
    }
  }

  /** The cells of period `t` in each of `views`. */
  private periodCells(a: AccountCells, views: View[], t: string): PeriodCells[] {
    return views.map((view) =>
      getOr(
        getOr(a.views, view, () => new Map()),
        t,
        () => new Map<string, Cell>(),
      ),
    );
  }

  private cell(cells: PeriodCells, key: string): Cell {
    let cell = cells.get(key);
    if (!cell) {
      cell = emptyCell();
      // one copy of the key string, shared by every period that has the cell
      cells.set(
        getOr(this.keys, key, () => key),
        cell,
      );
    }
    return cell;
  }

  /** An account's periods from..to (inclusive, period strings) of one view. */
  periods(accountId: string, view: View, from: string, to: string): PeriodRow[] {
    const out: PeriodRow[] = [];
    for (const [t, cells] of this.accounts.get(accountId)?.views.get(view) ?? [])
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
    this.keys.clear();
  }
}
