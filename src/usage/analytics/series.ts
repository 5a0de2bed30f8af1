import { validationError } from "../../http/errors";
import type { Bucket, Tier } from "../../quota/limits";
import type { Principal } from "../../quota/principal";
import type { UsageEventStore } from "../port";
import {
  binValue,
  type Cell,
  type GroupField as CellField,
  type CellGroup,
  type CellHint,
  type Granularity,
  groupOf,
  LAT_BINS,
  OTHER_BRAND,
  type PeriodRow,
  periodsBetween,
  type Rollup,
  rollupFor,
  type View,
} from "./cells";
import { type HistoryQuery, resolveRange } from "./service";

/** What group_by may name: the cell's fields, and the status as a class. */
export const GROUP_FIELDS = [
  "bucket",
  "key",
  "brand",
  "variant",
  "format",
  "status",
  "status_class",
] as const;
export type GroupField = (typeof GROUP_FIELDS)[number];

/** Longest range of an hourly query, in days. */
export const MAX_HOUR_RANGE_DAYS = 7;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export interface SeriesQuery extends HistoryQuery {
  granularity?: Granularity;
  group_by?: string;
  key?: string;
  brand?: string;
  limit?: number;
}

/** A query asks for the series answer when it uses any parameter beyond from, to and bucket. */
export const wantsSeries = (q: SeriesQuery): boolean =>
  q.granularity !== undefined ||
  q.group_by !== undefined ||
  q.key !== undefined ||
  q.brand !== undefined ||
  q.limit !== undefined;

export interface Point {
  t: string;
  requests: number;
  errors: number;
  rateLimited: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

interface GroupValues {
  bucket?: string;
  key?: string | null;
  brand?: string | null;
  variant?: string | null;
  format?: string | null;
  status?: number;
  status_class?: string;
}

export interface SeriesGroup extends Omit<Point, "t">, GroupValues {
  id: string;
  other?: true;
  series: Point[];
}

export interface UsageSeries {
  tier: Tier;
  from: string;
  to: string;
  granularity: Granularity;
  groupBy: GroupField[];
  filters: { key: string | null; bucket: Bucket | null; brand: string | null };
  totals: Omit<Point, "t">;
  series: Point[];
  groups: SeriesGroup[];
}

/** The status class of a status: 2xx, 3xx, 4xx (499 included), 429 or 5xx. */
export function statusClass(status: number): string {
  if (status === 429) return "429";
  return `${Math.floor(status / 100)}xx`;
}

function parseGroupBy(value: string | undefined): GroupField[] {
  if (value === undefined) return [];
  const parts = value.split(",").map((s) => s.trim());
  const ok =
    parts.length <= 2 &&
    new Set(parts).size === parts.length &&
    parts.every((p) => (GROUP_FIELDS as readonly string[]).includes(p));
  if (!ok)
    throw validationError(
      `Invalid query parameter group_by: one or two distinct of ${GROUP_FIELDS.join(", ")}, comma-separated (got "${value}")`,
    );
  return parts as GroupField[];
}

/**
 * Set field `f` of a cell's group into `into`; its label (for the group id) is returned. The
 * rollup read always holds the fields grouped by (rollupFor), so none is missing here.
 */
function setField(into: GroupValues, g: Partial<CellGroup>, f: GroupField): string {
  switch (f) {
    case "status_class":
      into.status_class = statusClass(g.status ?? 0);
      return into.status_class;
    case "status":
      into.status = g.status ?? 0;
      return String(into.status);
    case "bucket":
      into.bucket = g.bucket ?? "";
      return into.bucket;
    case "key":
      into.key = g.key ? g.key : null;
      return into.key ?? "(bearer)";
    case "brand":
      into.brand = g.brand ?? null;
      // apart from the (other) row of the groups past `limit`
      return into.brand === OTHER_BRAND ? "(other brands)" : (into.brand ?? "(none)");
    default:
      into[f] = g[f] ?? null;
      return into[f] ?? "(none)";
  }
}

/** The periods of the days from..to: the days, or their hours as YYYY-MM-DDTHH. */
const periods = (from: string, to: string, g: Granularity): string[] =>
  g === "day" ? periodsBetween(from, to, false) : periodsBetween(`${from}T00`, `${to}T23`, true);

const isoOf = (period: string) =>
  period.length === 10 ? `${period}T00:00:00Z` : `${period}:00:00Z`;

/** A group of the answer: its id, values, requests (to rank it) and slot. */
interface Group {
  id: string;
  values: GroupValues;
  n: number;
  slot: number;
}

const emptyPoint = (t: string): Point => ({
  t,
  requests: 0,
  errors: 0,
  rateLimited: 0,
  p50: null,
  p95: null,
  p99: null,
});

/** Slots of a dense accumulator: requests, errors, rateLimited, then the latency bins. */
const W = 3 + LAT_BINS;

/** each bin's value (binValue), computed once */
const BIN_VALUES = Array.from({ length: LAT_BINS }, (_, bin) => binValue(bin));

/**
 * Counts and latency quantiles of the accumulator at `off`, as a point at `t` (or, t undefined,
 * a summary without it): one walk over the bins (their sum is the request count: every request
 * is in one bin).
 */
function pointAt(acc: Float64Array, off: number, t?: string): Point {
  const requests = acc[off] as number;
  const errors = acc[off + 1] as number;
  const rateLimited = acc[off + 2] as number;
  let p50: number | null = null;
  let p95: number | null = null;
  let p99: number | null = null;
  if (requests > 0) {
    const r50 = Math.max(1, Math.ceil(0.5 * requests));
    const r95 = Math.max(1, Math.ceil(0.95 * requests));
    const r99 = Math.max(1, Math.ceil(0.99 * requests));
    let seen = 0;
    for (let bin = 0; bin < LAT_BINS && p99 === null; bin++) {
      seen += acc[off + 3 + bin] as number;
      if (p50 === null && seen >= r50) p50 = BIN_VALUES[bin] as number;
      if (p95 === null && seen >= r95) p95 = BIN_VALUES[bin] as number;
      if (seen >= r99) p99 = BIN_VALUES[bin] as number;
    }
    const last = BIN_VALUES[LAT_BINS - 1] as number;
    p50 ??= last;
    p95 ??= last;
    p99 ??= last;
  }
  if (t === undefined) return { requests, errors, rateLimited, p50, p95, p99 } as Point;
  return { t, requests, errors, rateLimited, p50, p95, p99 };
}

/** Add cell `c` into the accumulator at `off`. */
function addCell(acc: Float64Array, off: number, c: Cell) {
  acc[off] = (acc[off] as number) + c.n;
  acc[off + 1] = (acc[off + 1] as number) + c.e;
  acc[off + 2] = (acc[off + 2] as number) + c.r;
  const h = c.h;
  for (let j = 0; j < h.length; j += 2) {
    const b = off + 3 + (h[j] as number);
    acc[b] = (acc[b] as number) + (h[j + 1] as number);
  }
}

/** Add the W numbers at acc[off..] into into[at..] (a slot without requests holds none). */
function addSlot(into: Float64Array, at: number, acc: Float64Array, off: number) {
  if ((acc[off] as number) === 0) return;
  for (let j = 0; j < W; j++) into[at + j] = (into[at + j] as number) + (acc[off + j] as number);
}

/** Subtract the W numbers at acc[off..] from into[at..]. */
function subSlot(into: Float64Array, at: number, acc: Float64Array, off: number) {
  for (let j = 0; j < W; j++) into[at + j] = (into[at + j] as number) - (acc[off + j] as number);
}

/** Whether a cell's group passes the query's key, bucket and brand filters. */
type Filter = (g: Partial<CellGroup>) => boolean;

/**
 * The groups of the answer, each distinct cell key of the view decoded once: null when the
 * filters drop it, else its group (one per id: several keys may fall in one, e.g. the statuses
 * of a status class).
 */
class Groups {
  readonly byId = new Map<string, Group>();
  readonly decoded = new Map<string, Group | null>();
  constructor(
    private rollup: Rollup,
    private groupBy: GroupField[],
    private kept: Filter,
  ) {}

  of(key: string): Group | null {
    let d = this.decoded.get(key);
    if (d !== undefined) return d;
    const g = groupOf(this.rollup, key);
    d = null;
    if (this.kept(g)) {
      const values: GroupValues = {};
      const id = this.groupBy.map((f) => setField(values, g, f)).join("/");
      d = this.byId.get(id) ?? { id, values, n: 0, slot: 0 };
      this.byId.set(id, d);
    }
    this.decoded.set(key, d);
    return d;
  }

  /** The groups by requests, most first, ties by id. */
  ranked(): Group[] {
    return [...this.byId.values()].sort(
      (x, y) => y.n - x.n || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
  }
}

/**
 * What the two reads of a two-pass grouped series cost beyond the top groups' cells, in cells
 * per period of the range: the extra statement's seek of each period and the totals' cells.
 */
const TWO_PASS_CELLS_PER_PERIOD = 4;

/**
 * An account's usage as chart series: per day or hour, filtered by key, bucket and brand,
 * optionally split into the top `limit` groups of one or two fields plus an (other) row, with
 * latency quantiles from the cells' histograms. Read from the smallest rollup of the analytics
 * projection that holds the fields asked for; never from the event log.
 *
 * A grouping by brand (without brand=) has up to TOP_BRANDS + 2 brands per period, hundreds
 * over a range, and may read in two passes (the store's `cellCounts`): the groups
 * are ranked by the requests of the view's cells, read without histograms; when they are more
 * than `limit` and their cells outnumber the top groups' by more than TWO_PASS_CELLS_PER_PERIOD
 * per period, only the top groups' cells are read whole, and the (other) row is the
 * filtered totals (from the smallest rollup holding the filters' fields) minus the top groups:
 * counts and histograms subtract exactly, every request being in one bin. The answer is the
 * one a single read of every cell gives.
 */
export async function usageSeries(
  store: UsageEventStore,
  principal: Principal,
  q: SeriesQuery,
  now = new Date(),
): Promise<UsageSeries> {
  const granularity = q.granularity ?? "day";
  const groupBy = parseGroupBy(q.group_by);
  const hourly = granularity === "hour";
  const { from, to } = resolveRange(q, now, {
    maxDays: hourly ? MAX_HOUR_RANGE_DAYS : undefined,
    defaultDays: hourly ? 1 : undefined,
    what: hourly ? "with granularity=hour" : undefined,
  });
  const limit = q.limit ?? DEFAULT_LIMIT;
  const brand = q.brand?.toLowerCase();
  const filtered = new Set<CellField>();
  if (q.bucket !== undefined) filtered.add("bucket");
  if (q.key !== undefined) filtered.add("key");
  if (brand !== undefined) filtered.add("brand");
  const needed = new Set<CellField>([
    ...filtered,
    ...groupBy.map((f): CellField => (f === "status_class" ? "status" : f)),
  ]);
  const rollup = rollupFor(needed);
  const all = periods(from, to, granularity);
  const at = new Map(all.map((t, i) => [t, i]));
  const times = all.map(isoOf);
  const kept: Filter = (g) =>
    (q.bucket === undefined || g.bucket === q.bucket) &&
    (q.key === undefined || g.key === q.key) &&
    (brand === undefined || g.brand === brand);
  const groups = new Groups(rollup, groupBy, kept);
  const c = { principal, q, from, to, granularity, groupBy, limit, at, times, groups };
  const first = all[0] as string;
  const last = all[all.length - 1] as string;
  const hint: CellHint | undefined =
    brand !== undefined ? { brand } : q.key !== undefined ? { key: q.key } : undefined;
  const view = (r: Rollup): View => `${granularity}.${r}`;
  const read = (r: Rollup, keys?: string[]) =>
    store.cells(principal.accountId, view(r), first, last, keys ? { ...hint, keys } : hint);
  // without filters the totals are every cell of a period: the store may sum them
  const readTotals = (r: Rollup) =>
    filtered.size === 0
      ? store.cells(principal.accountId, view(r), first, last, { summed: true })
      : read(r);

  const totalsRollup = rollupFor(filtered);
  if (groupBy.includes("brand") && brand === undefined && totalsRollup !== rollup) {
    const counts = await store.cellCounts(principal.accountId, view(rollup), first, last, hint);
    let cells = 0;
    for (const [key, count] of counts) {
      cells += count.cells;
      const g = groups.of(key);
      if (g) g.n += count.n;
    }
    const ranked = groups.ranked();
    if (ranked.length > limit) {
      const top = new Set(ranked.slice(0, limit));
      const keys: string[] = [];
      let topCells = 0;
      for (const [key, g] of groups.decoded)
        if (g && top.has(g)) {
          keys.push(key);
          topCells += counts.get(key)?.cells ?? 0;
        }
      // the two reads cost the top groups' cells, and a seek and a few totals cells of each
      // period: read so only when that is less than every cell
      if (topCells + TWO_PASS_CELLS_PER_PERIOD * all.length < cells) {
        const [rows, totals] = await Promise.all([read(rollup, keys), readTotals(totalsRollup)]);
        return chartOf(rows, {
          ...c,
          ranked,
          totals: { rows: totals, rollup: totalsRollup, kept },
        });
      }
    }
    // few groups or few cells: every cell is read, and ranked again from them
    for (const g of ranked) g.n = 0;
  }
  return chartOf(await (groupBy.length === 0 ? readTotals(rollup) : read(rollup)), c);
}

/** What chartOf needs of the query. */
interface ChartQuery {
  principal: Principal;
  q: SeriesQuery;
  from: string;
  to: string;
  granularity: Granularity;
  groupBy: GroupField[];
  limit: number;
  /** period → its position in the range */
  at: Map<string, number>;
  /** each period's start, ISO 8601 */
  times: string[];
  groups: Groups;
  /** the groups already ranked (two passes; else ranked from the cells read) */
  ranked?: Group[];
  /**
   * two passes: the cells holding the filtered totals, of the rollup given: the (other) row is
   * their sum minus the top groups'
   */
  totals?: { rows: PeriodRow[]; rollup: Rollup; kept: Filter };
}

/** The series answer of the cells read. */
function chartOf(rows: PeriodRow[], c: ChartQuery): UsageSeries {
  const { principal, q, from, to, granularity, groupBy, limit, at, times, groups, totals } = c;
  const all = times;
  // each period's cells with their group (whose slot the cell is added into)
  const kept: { cells: Cell[]; groups: Group[] }[] = new Array(all.length);
  const collect = (
    source: PeriodRow[],
    groupOfKey: (key: string) => Group | null,
    count: boolean,
  ) => {
    for (const { t, cells } of source) {
      const i = at.get(t);
      if (i === undefined) continue;
      let part = kept[i];
      if (!part) {
        part = { cells: [], groups: [] };
        kept[i] = part;
      }
      for (const [key, cell] of cells) {
        const d = groupOfKey(key);
        if (!d) continue;
        if (count) d.n += cell.n;
        part.cells.push(cell);
        part.groups.push(d);
      }
    }
  };
  // one pass: the groups ranked by the cells read; then the top `limit` groups by requests get a
  // slot each, the rest share the (other) slot
  let ranked = c.ranked;
  if (!ranked) {
    collect(rows, (key) => groups.of(key), true);
    ranked = groupBy.length === 0 ? [] : groups.ranked();
  }
  const top = ranked.slice(0, limit);
  for (const g of ranked) g.slot = top.length;
  top.forEach((g, slot) => {
    g.slot = slot;
  });
  const slots = Math.max(1, top.length + (ranked.length > limit ? 1 : 0));
  const overallAt = slots * W;
  const otherAt = top.length * W;
  if (totals) {
    // two passes: the top groups' cells (any other a store returned is left out), and the
    // filtered totals' cells into the overall slot
    collect(
      rows,
      (key) => {
        const g = groups.of(key);
        return g && g.slot < top.length ? g : null;
      },
      false,
    );
    const overall: Group = { id: "", values: {}, n: 0, slot: slots };
    const keeps = new Map<string, boolean>();
    collect(
      totals.rows,
      (key) => {
        let ok = keeps.get(key);
        if (ok === undefined) {
          ok = totals.kept(groupOf(totals.rollup, key));
          keeps.set(key, ok);
        }
        return ok ? overall : null;
      },
      false,
    );
  }

  // period by period: the period's cells summed per slot in a small scratch (slots x W numbers,
  // reused), its points made from it, and the slot added into the slot's whole-range total
  const scratch = new Float64Array((slots + 1) * W);
  const sums = new Float64Array((slots + 1) * W);
  const seriesOfSlot: Point[][] = Array.from({ length: slots + 1 }, () => new Array(all.length));
  for (let i = 0; i < all.length; i++) {
    const t = times[i] as string;
    const part = kept[i];
    if (part) {
      scratch.fill(0);
      const { cells, groups } = part;
      for (let k = 0; k < cells.length; k++)
        addCell(scratch, (groups[k] as Group).slot * W, cells[k] as Cell);
      if (totals) {
        // the (other) slot: the overall minus the top groups (exact: integer counts and bins)
        addSlot(scratch, otherAt, scratch, overallAt);
        for (let slot = 0; slot < top.length; slot++) subSlot(scratch, otherAt, scratch, slot * W);
      } else
        for (let slot = 0; slot < slots; slot++) addSlot(scratch, overallAt, scratch, slot * W);
      for (let slot = 0; slot <= slots; slot++) addSlot(sums, slot * W, scratch, slot * W);
    }
    for (let slot = 0; slot <= slots; slot++)
      (seriesOfSlot[slot] as Point[])[i] = part ? pointAt(scratch, slot * W, t) : emptyPoint(t);
  }

  const out: SeriesGroup[] = top.map((g, slot) => ({
    id: g.id,
    ...g.values,
    ...(pointAt(sums, slot * W) as Omit<Point, "t">),
    series: seriesOfSlot[slot] as Point[],
  }));
  if (ranked.length > limit)
    out.push({
      id: "(other)",
      other: true,
      ...(pointAt(sums, otherAt) as Omit<Point, "t">),
      series: seriesOfSlot[top.length] as Point[],
    });
  const series = seriesOfSlot[slots] as Point[];
  const summary = pointAt(sums, overallAt) as Omit<Point, "t">;
  return {
    tier: principal.tier,
    from,
    to,
    granularity,
    groupBy,
    filters: { key: q.key ?? null, bucket: q.bucket ?? null, brand: q.brand ?? null },
    totals: summary,
    series,
    groups: out,
  };
}
