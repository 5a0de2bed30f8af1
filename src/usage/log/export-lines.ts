import { type Batch, eventAt, idOf } from "./batch";

/**
 * The NDJSON lines of a batch's events (each event's JSON, fields in the stored order: the
 * export's format) after event id `after`, at most `max`, pushed onto `out`. Returns how many.
 */
export function exportLines(b: Batch, after: string | null, max: number, out: string[]): number {
  let n = 0;
  for (let i = 0; i < b.n && n < max; i++) {
    if (after !== null && idOf(b, i) <= after) continue;
    out.push(`${JSON.stringify(eventAt(b, i))}\n`);
    n++;
  }
  return n;
}
