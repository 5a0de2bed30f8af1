/**
 * The catalog's evaluation figures on its own evaluation set (tests/catalog/lists/eval-domains.txt
 * and eval-queries.txt, written from general knowledge): domain coverage, precision and
 * artwork share, search top-1, each by section of the lists. Offline: the resolver and the
 * search index run in process on the built catalog (no discovery).
 *
 *   bun scripts/catalog-eval.ts [catalog.json]      default build/catalog.json or $CATALOG_FILE
 *   bun scripts/catalog-eval.ts --no-artwork          also list the resolved domains whose
 *                                                     brand has no artwork, by section
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { normalizeHost } from "../src/catalog/brand/domain";
import { BrandResolver } from "../src/catalog/brand/service";
import type { Brand } from "../src/catalog/built-catalog";
import { SearchIndex } from "../src/catalog/search/service";
import { compact } from "../src/catalog/search/text";
import { CatalogService, hasArtwork } from "../src/catalog/service";
import { FileCatalogSource } from "../src/catalog/store/embedded";

const ROOT = resolve(import.meta.dir, "..");
const LISTS = join(ROOT, "tests", "catalog", "lists");
const args = process.argv.slice(2);
const listNoArtwork = args.includes("--no-artwork");
const file = resolve(
  args.find((a) => !a.startsWith("--")) ??
    process.env.CATALOG_FILE ??
    join(ROOT, "build", "catalog.json"),
);

interface Entry {
  section: string;
  input: string;
  expected: string[];
}

/** "<input><TAB><name>|<name>" lines; a "# section" comment names the lines after it. */
function readSections(name: string): Entry[] {
  const out: Entry[] = [];
  let section = "";
  for (const line of readFileSync(join(LISTS, name), "utf8").split("\n")) {
    const heading = /^# ([A-Za-z][A-Za-z ,-]*)$/.exec(line);
    if (heading?.[1]) section = heading[1];
    if (!line.trim() || line.startsWith("#")) continue;
    const [input, names] = line.split("\t");
    if (!input || !names) throw new Error(`${name}: bad line ${JSON.stringify(line)}`);
    out.push({ section, input, expected: names.split("|").map(compact) });
  }
  return out;
}

const right = (b: Brand, e: Entry) =>
  e.expected.includes(compact(b.name)) || e.expected.includes(compact(b.slug));
const pct = (n: number, d: number) => `${d ? ((100 * n) / d).toFixed(1) : "-"}% (${n}/${d})`;

const source = new FileCatalogSource(file);
const catalog = new CatalogService(source);
await catalog.load();
const resolver = new BrandResolver(catalog);
const index = new SearchIndex(catalog);

const domains = readSections("eval-domains.txt");
const queries = readSections("eval-queries.txt");
function bySection(list: Entry[]): Map<string, Entry[]> {
  const out = new Map<string, Entry[]>();
  for (const e of list) out.set(e.section, [...(out.get(e.section) ?? []), e]);
  return out;
}

console.log(`catalog ${file}: ${catalog.size} brands\n`);
console.log("| domains | coverage | precision | artwork of resolved |\n|---|---:|---:|---:|");
const row = (label: string, list: Entry[]) => {
  let resolved = 0;
  let correct = 0;
  let art = 0;
  const wrong: string[] = [];
  const noArtwork: string[] = [];
  for (const e of list) {
    const h = normalizeHost(e.input);
    const b = h.ok ? resolver.resolveHost(h.host) : null;
    if (!b) continue;
    resolved++;
    if (right(b, e)) correct++;
    else wrong.push(`${e.input} -> ${b.slug}`);
    if (hasArtwork(b)) art++;
    else noArtwork.push(`${e.input} (${b.slug})`);
  }
  console.log(
    `| ${label} | ${pct(resolved, list.length)} | ${pct(correct, resolved)} | ${pct(art, resolved)} |`,
  );
  return { wrong, noArtwork };
};
const wrongDomains = row("all", domains).wrong;
const withoutArtwork: string[] = [];
for (const [section, list] of bySection(domains)) {
  const { noArtwork } = row(section, list);
  if (noArtwork.length)
    withoutArtwork.push(`${section} (${noArtwork.length}): ${noArtwork.join(", ")}`);
}

console.log("\n| queries | top-1 |\n|---|---:|");
const misses: string[] = [];
const top1 = (label: string, list: Entry[], record: boolean) => {
  let hits = 0;
  for (const e of list) {
    const first = index.search(e.input, 1)[0];
    if (first && right(first, e)) hits++;
    else if (record) misses.push(`${e.input} -> ${first?.slug ?? "(nothing)"}`);
  }
  console.log(`| ${label} | ${pct(hits, list.length)} |`);
};
top1("all", queries, true);
for (const [section, list] of bySection(queries)) top1(section, list, false);
console.log(`\nwrong domains: ${wrongDomains.join(", ") || "none"}`);
console.log(`search misses: ${misses.join(", ")}`);
if (listNoArtwork) console.log(`\nresolved without artwork:\n${withoutArtwork.join("\n")}`);
