/**
 * The two hand-written lists (domains.txt, queries.txt) and how an answer is judged.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Brand } from "../../../src/catalog/built-catalog";
import { compact } from "../../../src/catalog/search/text";

export interface ListEntry {
  input: string;
  expected: string[];
  /** the issue whose part of the list holds the entry (1: the list as first written) */
  part: number;
}

/** Lines "<input><TAB><name>|<name>..."; # comments and blank lines are skipped. */
export function readList(file: string): ListEntry[] {
  const text = readFileSync(join(import.meta.dir, file), "utf8");
  const out: ListEntry[] = [];
  let part = 1;
  for (const line of text.split("\n")) {
    // a comment "# Issue N: ..." starts the part of the list a later issue added
    const issue = /^# Issue (\d+):/.exec(line);
    if (issue) part = Number(issue[1]);
    if (!line.trim() || line.startsWith("#")) continue;
    const [input, names] = line.split("\t");
    if (!input || !names) throw new Error(`${file}: bad line ${JSON.stringify(line)}`);
    out.push({ input, expected: names.split("|").map(compact), part });
  }
  return out;
}

/** The brand is one of the expected names (by name or slug, compared compact). */
export function isExpected(brand: Brand, expected: string[]): boolean {
  return expected.includes(compact(brand.name)) || expected.includes(compact(brand.slug));
}

export const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)}%`;
