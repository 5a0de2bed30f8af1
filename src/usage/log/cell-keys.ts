import { groupOf, OTHER_MARK, ROLLUPS, type Rollup } from "../analytics/cells";
import { type FieldValue, OTHER } from "./period";

/**
 * Cells as text keys: a rollup's field values encoded and joined by "|" (analytics/cells.ts:
 * `enc`, null as "%", the brands past a period's 50 as "%o"), as the per-event layout's cells
 * were keyed (its migrations read them).
 */

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
