/** Stable brand ids: fixtures/brand-ids.json maps slug -> id and is append-only. */
import { existsSync, readFileSync } from "node:fs";

export function loadIds(file: string): Record<string, number> {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
}

/**
 * Ids for the given slugs: known slugs keep theirs, new slugs get max+1 in sorted order.
 * Slugs that left the catalog keep their entry, so an id is never reused.
 */
export function assignIds(
  known: Record<string, number>,
  slugs: string[],
): { ids: Record<string, number>; added: string[] } {
  const ids = { ...known };
  let next = Math.max(0, ...Object.values(ids)) + 1;
  const added = slugs.filter((s) => ids[s] === undefined).sort();
  for (const slug of added) ids[slug] = next++;
  return { ids, added };
}

/** JSON text of the id map, ordered by id, one entry per line. */
export function formatIds(ids: Record<string, number>): string {
  const entries = Object.entries(ids).sort((a, b) => a[1] - b[1]);
  return `{\n${entries.map(([s, id]) => `  ${JSON.stringify(s)}: ${id}`).join(",\n")}\n}\n`;
}
