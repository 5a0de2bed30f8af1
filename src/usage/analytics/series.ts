import type { Principal } from "../../accounts/model";
import { validationError } from "../../http/errors";
import type { Bucket, Tier } from "../../quota/limits";
import type { UsageEventStore } from "../port";
import {
  type Cell,
  type CellGroup,
  emptyCell,
  type Granularity,
  groupOf,
  mergeCell,
  quantile,
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

/** Set field `f` of a cell's group into `into`; its label (for the group id) is returned. */
function setField(into: GroupValues, g: CellGroup, f: GroupField): string {
  switch (f) {
    case "status_class":
      into.status_class = statusClass(g.status);
      return into.status_class;
    case "status":
      into.status = g.status;
      return String(g.status);
    case "bucket":
      into.bucket = g.bucket;
      return g.bucket;
    case "key":
      into.key = g.key === "" ? null : g.key;
      return into.key ?? "(bearer)";
    default:
      into[f] = g[f];
      return g[f] ?? "(none)";
  }
}

/** The periods of a range: days, or hours as YYYY-MM-DDTHH. */
function periods(from: string, to: string, g: Granularity): string[] {
  const out: string[] = [];
  for (let ms = Date.parse(`${from}T00:00:00Z`); ; ms += 86_400_000) {
    const day = new Date(ms).toISOString().slice(0, 10);
    if (day > to) break;
    if (g === "day") out.push(day);
    else for (let h = 0; h < 24; h++) out.push(`${day}T${String(h).padStart(2, "0")}`);
  }
  return out;
}

const isoOf = (period: string) =>
  period.length === 10 ? `${period}T00:00:00Z` : `${period}:00:00Z`;

const summary = (c: Cell): Omit<Point, "t"> => ({
  requests: c.n,
  errors: c.e,
  rateLimited: c.r,
  p50: quantile(c.h, 0.5),
  p95: quantile(c.h, 0.95),
  p99: quantile(c.h, 0.99),
});

/** Cells summed per period. */
class Acc {
  total = emptyCell();
  per = new Map<string, Cell>();
  add(t: string, c: Cell) {
    mergeCell(this.total, c);
    let p = this.per.get(t);
    if (!p) {
      p = emptyCell();
      this.per.set(t, p);
    }
    mergeCell(p, c);
  }
  merge(o: Acc) {
    for (const [t, c] of o.per) this.add(t, c);
  }
  series(all: string[]): Point[] {
    return all.map((t) => ({ t: isoOf(t), ...summary(this.per.get(t) ?? emptyCell()) }));
  }
}

/**
 * An account's usage as chart series: per day or hour, filtered by key, bucket and brand,
 * optionally split into the top `limit` groups of one or two fields plus an (other) row, with
 * latency quantiles from the cells' histograms. Read from the analytics projection only.
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
  const all = periods(from, to, granularity);
  const rows = await store.cells(
    principal.accountId,
    granularity,
    all[0] as string,
    all[all.length - 1] as string,
  );

  const brand = q.brand?.toLowerCase();
  const overall = new Acc();
  const groups = new Map<string, { values: GroupValues; acc: Acc }>();
  const decoded = new Map<string, CellGroup>();
  for (const { t, cells } of rows)
    for (const [key, cell] of cells) {
      let g = decoded.get(key);
      if (!g) {
        g = groupOf(key);
        decoded.set(key, g);
      }
      if (q.bucket !== undefined && g.bucket !== q.bucket) continue;
      if (q.key !== undefined && g.key !== q.key) continue;
      if (brand !== undefined && g.brand !== brand) continue;
      overall.add(t, cell);
      if (groupBy.length === 0) continue;
      const values: GroupValues = {};
      const id = groupBy.map((f) => setField(values, g, f)).join("/");
      let entry = groups.get(id);
      if (!entry) {
        entry = { values, acc: new Acc() };
        groups.set(id, entry);
      }
      entry.acc.add(t, cell);
    }

  const ranked = [...groups.entries()].sort(
    ([a, x], [b, y]) => y.acc.total.n - x.acc.total.n || (a < b ? -1 : a > b ? 1 : 0),
  );
  const out: SeriesGroup[] = ranked.slice(0, limit).map(([id, { values, acc }]) => ({
    id,
    ...values,
    ...summary(acc.total),
    series: acc.series(all),
  }));
  if (ranked.length > limit) {
    const rest = new Acc();
    for (const [, { acc }] of ranked.slice(limit)) rest.merge(acc);
    out.push({ id: "(other)", other: true, ...summary(rest.total), series: rest.series(all) });
  }
  return {
    tier: principal.tier,
    from,
    to,
    granularity,
    groupBy,
    filters: { key: q.key ?? null, bucket: q.bucket ?? null, brand: q.brand ?? null },
    totals: summary(overall.total),
    series: overall.series(all),
    groups: out,
  };
}
