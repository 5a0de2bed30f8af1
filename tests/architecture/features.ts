import type { Graph } from "./graph";

/**
 * The folders of src/ that are layers every feature may use (within the floors), not features:
 * the HTTP base, the route guards, the runtime functions and the databases.
 */
export const LAYERS = new Set(["http", "guard", "platform", "store"]);

/** A feature and the features its files may import, in the table's order (bottom first). */
export type FeatureTable = { feature: string; imports: string[] }[];

/** The feature a file of src/ belongs to (its folder under src/), or null for a layer or a root file. */
export function featureOf(file: string): string | null {
  const m = /^src\/([^/]+)\//.exec(file);
  return m && !LAYERS.has(m[1] as string) ? (m[1] as string) : null;
}

/**
 * The table under `heading` in `markdown`: rows of `| \`feature\` | \`a\`, \`b\` |` (a dash for
 * none). Throws when the heading or its table is missing, so the check never passes on nothing.
 */
export function readFeatureTable(markdown: string, heading = "## Features"): FeatureTable {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no "${heading}" section`);
  const section = markdown.slice(start + heading.length + 2).split(/\n## /)[0] as string;
  const names = (cell: string) => [...cell.matchAll(/`([a-z-]+)`/g)].map((m) => m[1] as string);
  const table: FeatureTable = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    // | `feature` | imports | (a header or separator row names no feature in backticks)
    const [feature] = names(cells[1] ?? "");
    if (!line.startsWith("|") || feature === undefined) continue;
    table.push({ feature, imports: names(cells[2] ?? "") });
  }
  if (table.length === 0) throw new Error(`no feature table under "${heading}"`);
  return table;
}

/** The imports of `graph` from one feature into another that the table does not allow, as "from -> to". */
export function undeclared(graph: Graph, table: FeatureTable): string[] {
  const allowed = new Map(table.map((r) => [r.feature, new Set(r.imports)]));
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = featureOf(from);
    if (a === null) continue;
    for (const to of targets) {
      const b = featureOf(to);
      if (b !== null && b !== a && !allowed.get(a)?.has(b)) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/** The feature-to-feature arrows `graph` has, as "a -> b". */
export function arrows(graph: Graph): Set<string> {
  const out = new Set<string>();
  for (const [from, targets] of graph)
    for (const to of targets) {
      const [a, b] = [featureOf(from), featureOf(to)];
      if (a !== null && b !== null && a !== b) out.add(`${a} -> ${b}`);
    }
  return out;
}

/**
 * Arrows of the table that run back up: a row may name only features of the rows above it
 * (the table lists the features bottom first), so the features import each other in one
 * direction and no circle can close between them.
 */
export function backward(table: FeatureTable): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { feature, imports } of table) {
    for (const i of imports) if (!seen.has(i)) out.push(`${feature} -> ${i}`);
    seen.add(feature);
  }
  return out;
}
