import { enc, groupOf, OTHER_MARK, ROLLUPS, type Rollup } from "../analytics/cells";
import { type FieldValue, OTHER, type PCell } from "./period";

/**
 * Cells as text keys: a rollup's field values encoded and joined by "|" (analytics/cells.ts:
 * `enc`, null as "%", the brands past a period's 50 as "%o"). MongoDB's period documents name
 * their counters by them, and the per-event log's cells were keyed by them.
 */

/** The text key of a cell's fields in a rollup. */
export function keyOfFields(f: readonly FieldValue[]): string {
  let out = "";
  for (let i = 0; i < f.length; i++) {
    const v = f[i] as FieldValue;
    if (i > 0) out += "|";
    out += v === OTHER ? OTHER_MARK : typeof v === "number" ? String(v) : enc(v);
  }
  return out;
}

/** The field values of a text key of a rollup (the brands past 50 as OTHER). */
export function fieldsOfKey(rollup: Rollup, key: string): FieldValue[] {
  const g = groupOf(rollup, key);
  const parts = key.split("|");
  return ROLLUPS[rollup].map((f, i): FieldValue => {
    if (f === "brand") return parts[i] === OTHER_MARK ? OTHER : (g.brand ?? null);
    if (f === "status") return g.status ?? 0;
    if (f === "key") return g.key ?? "";
    return (g[f] as string | null | undefined) ?? null;
  });
}

/** A cell from counters stored as `{n, e, r, h: {bin: requests}}`. */
export function cellOfCounters(
  f: FieldValue[],
  d: { n?: number; e?: number; r?: number; h?: Record<string, number> },
): PCell {
  const h: number[] = [];
  const bins = Object.keys(d.h ?? {})
    .map(Number)
    .sort((x, y) => x - y);
  for (const bin of bins) h.push(bin, (d.h as Record<string, number>)[bin] as number);
  return { f, n: d.n ?? 0, e: d.e ?? 0, r: d.r ?? 0, h };
}
