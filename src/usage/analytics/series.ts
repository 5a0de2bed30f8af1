import { invalid } from "../../platform/domain-errors";
import type { Bucket, Tier } from "../../quota/limits";
import type { Principal } from "../../quota/principal";
import { type FieldValue, OTHER, type PCell } from "../log/period";
import type { CellHint, PeriodRow, UsageLog } from "../log/port";
import { retentionCutoff } from "../retention";
import {
  binValue,
  type GroupField as CellField,
  type Granularity,
  LAT_BINS,
  OTHER_BRAND,
  periodsBetween,
  ROLLUPS,
  type Rollup,
  rollupFor,
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
    throw invalid(
      `Invalid query parameter group_by: one or two distinct of ${GROUP_FIELDS.join(", ")}, comma-separated (got "${value}")`,
    );
  return parts as GroupField[];
}

/** Set field `f` (value `v` of a cell) into `into`; its label (for the group id) is returned. */
function setField(into: GroupValues, f: GroupField, v: FieldValue): string {
  switch (f) {
    case "status_class":
      into.status_class = statusClass((v as number) ?? 0);
      return into.status_class;
    case "status":
      into.status = (v as number) ?? 0;
      return String(into.status);
    case "bucket":
      into.bucket = (v as string) ?? "";
      return into.bucket;
    case "key":
      into.key = v ? (v as string) : null;
      return into.key ?? "(bearer)";
    case "brand":
      // apart from the (other) row of the groups past `limit`
      if (v === OTHER) {
        into.brand = OTHER_BRAND;
        return "(other brands)";
      }
      into.brand = (v as string | null) ?? null;
      return into.brand ?? "(none)";
    default:
      into[f] = (v as string | null) ?? null;
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
function addCell(acc: Float64Array, off: number, c: PCell) {
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

/** A value of a cell field as the answer names it (group values and labels). */
type Values = Partial<Record<CellField, FieldValue>>;

/**
 * The groups of the answer: each cell's group found from the values of its grouped fields (a
 * map per field, so no key is built per cell); cells the filters drop have none.
 */
class Groups {
  readonly byId = new Map<string, Group>();
  /** grouped field positions in the rollup's cells */
  private readonly at: number[];
  private readonly cache = new Map<FieldValue, Group | Map<FieldValue, Group>>();
  private readonly filters: [number, FieldValue][];

  constructor(
    rollup: Rollup,
    private groupBy: GroupField[],
    filters: Values,
  ) {
    const fields = ROLLUPS[rollup] as readonly string[];
    this.at = groupBy.map((f) => fields.indexOf(f === "status_class" ? "status" : f));
    this.filters = Object.entries(filters).map(([f, v]) => [fields.indexOf(f), v as FieldValue]);
  }

  /** the one group of an answer without group_by */
  private only: Group | null = null;

  of(c: PCell): Group | null {
    const f = c.f;
    for (const [i, v] of this.filters) if (f[i] !== v) return null;
    if (this.at.length === 0) {
      this.only ??= this.group(f);
      return this.only;
    }
    const first = this.cache.get(f[this.at[0] as number] as FieldValue);
    if (this.at.length === 1) return (first as Group | undefined) ?? this.group(f);
    const g = (first as Map<FieldValue, Group> | undefined)?.get(
      f[this.at[1] as number] as FieldValue,
    );
    return g ?? this.group(f);
  }

  private group(f: FieldValue[]): Group {
    const values: GroupValues = {};
    const id = this.groupBy
      .map((name, i) => setField(values, name, f[this.at[i] as number] as FieldValue))
      .join("/");
    let g = this.byId.get(id);
    if (!g) {
      g = { id, values, n: 0, slot: 0 };
      this.byId.set(id, g);
    }
    if (this.at.length === 1) this.cache.set(f[this.at[0] as number] as FieldValue, g);
    else if (this.at.length === 2) {
      const k = f[this.at[0] as number] as FieldValue;
      let m = this.cache.get(k) as Map<FieldValue, Group> | undefined;
      if (!m) {
        m = new Map();
        this.cache.set(k, m);
      }
      m.set(f[this.at[1] as number] as FieldValue, g);
    }
    return g;
  }

  /** The groups by requests, most first, ties by id. */
  ranked(): Group[] {
    return [...this.byId.values()].sort(
      (x, y) => y.n - x.n || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
  }
}

/**
 * An account's usage as chart series: per day or hour, filtered by key, bucket and brand,
 * optionally split into the top `limit` groups of one or two fields plus an (other) row, with
 * latency quantiles from the cells' histograms. Read from the smallest rollup of the analytics
 * projection that holds the fields asked for (one read); never from the event log.
 */
export async function usageSeries(
  store: Pick<UsageLog, "cells">,
  principal: Principal,
  q: SeriesQuery,
  now = new Date(),
  hourlyDays = Number.POSITIVE_INFINITY,
): Promise<UsageSeries> {
  const granularity = q.granularity ?? "day";
  const groupBy = parseGroupBy(q.group_by);
  const hourly = granularity === "hour";
  const { from, to } = resolveRange(q, now, {
    maxDays: hourly ? MAX_HOUR_RANGE_DAYS : undefined,
    defaultDays: hourly ? 1 : undefined,
    what: hourly ? "with granularity=hour" : undefined,
  });
  // hours older than USAGE_HOURLY_DAYS are kept only in their days' counts
  if (hourly && Number.isFinite(hourlyDays) && from < retentionCutoff(hourlyDays, now))
    throw invalid(
      `Invalid query parameter from: granularity=hour covers the last ${hourlyDays} days (from ${retentionCutoff(hourlyDays, now)}); older days are answered per day`,
    );
  const limit = q.limit ?? DEFAULT_LIMIT;
  const lower = q.brand?.toLowerCase();
  const brand: FieldValue | undefined =
    lower === undefined ? undefined : lower === OTHER_BRAND ? OTHER : lower;
  const filters: Values = {};
  if (q.bucket !== undefined) filters.bucket = q.bucket;
  if (q.key !== undefined) filters.key = q.key;
  if (brand !== undefined) filters.brand = brand;
  const needed = new Set<CellField>([
    ...(Object.keys(filters) as CellField[]),
    ...groupBy.map((f): CellField => (f === "status_class" ? "status" : f)),
  ]);
  const rollup = rollupFor(needed);
  const all = periods(from, to, granularity);
  const at = new Map(all.map((t, i) => [t, i]));
  const times = all.map(isoOf);
  const groups = new Groups(rollup, groupBy, filters);
  const hint: CellHint | undefined =
    brand !== undefined
      ? { brand: brand as CellHint["brand"] }
      : q.key !== undefined
        ? { key: q.key }
        : undefined;
  const rows = await store.cells(
    principal.accountId,
    granularity,
    rollup,
    all[0] as string,
    all[all.length - 1] as string,
    hint,
  );
  return chartOf(rows, { principal, q, from, to, granularity, groupBy, limit, at, times, groups });
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
}

/** The series answer of the cells read. */
function chartOf(rows: PeriodRow[], c: ChartQuery): UsageSeries {
  const { principal, q, from, to, granularity, groupBy, limit, at, times, groups } = c;
  const all = times;
  // each period's cells with their group (whose slot the cell is added into); the groups
  // counted, then ranked: the top `limit` by requests get a slot each, the rest share the
  // (other) slot
  const kept: { cells: PCell[]; groups: Group[] }[] = new Array(all.length);
  for (const { t, cells } of rows) {
    const i = at.get(t);
    if (i === undefined) continue;
    let part = kept[i];
    if (!part) {
      part = { cells: [], groups: [] };
      kept[i] = part;
    }
    for (const cell of cells) {
      const d = groups.of(cell);
      if (!d) continue;
      d.n += cell.n;
      part.cells.push(cell);
      part.groups.push(d);
    }
  }
  const ranked = groupBy.length === 0 ? [] : groups.ranked();
  const top = ranked.slice(0, limit);
  for (const g of ranked) g.slot = top.length;
  top.forEach((g, slot) => {
    g.slot = slot;
  });
  const slots = Math.max(1, top.length + (ranked.length > limit ? 1 : 0));
  const overallAt = slots * W;
  const otherAt = top.length * W;

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
        addCell(scratch, (groups[k] as Group).slot * W, cells[k] as PCell);
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
