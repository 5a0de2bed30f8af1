/**
 * The descriptor list's figures (tests/catalog/lists/transactions.txt) on the built catalog, in
 * process: right brand, wrong brand and negatives matched, for the entries the rules were
 * written looking at and for the held-out ones; the misses and wrong answers of the first.
 *
 *   bun scripts/transactions-eval.ts [--all]   (--all also lists the held-out entries' misses)
 */
import { join, resolve } from "node:path";
import { BrandResolver } from "../src/catalog/brand/service";
import { CatalogService } from "../src/catalog/service";
import { FileCatalogSource } from "../src/catalog/store/embedded";
import { TransactionMatcher } from "../src/catalog/transactions/service";
import { judge, pct, readDescriptorList } from "../tests/catalog/lists/transactions";

const ROOT = resolve(import.meta.dir, "..");
const all = process.argv.includes("--all");
const catalog = new CatalogService(
  new FileCatalogSource(process.env.CATALOG_FILE ?? join(ROOT, "build", "catalog.sqlite")),
);
await catalog.load();
const resolver = new BrandResolver(catalog);
const matcher = new TransactionMatcher(catalog, resolver);
const list = readDescriptorList();

for (const [name, entries] of [
  ["written against", list.filter((e) => e.part === 1 && !e.heldOut)],
  ["held out", list.filter((e) => e.heldOut)],
  ["second part", list.filter((e) => e.part === 2)],
  ["whole list", list],
] as const) {
  const answers = entries.map((e) => {
    const r = matcher.match(e);
    return r.brand ? { id: r.brand.id, slug: r.brand.slug } : null;
  });
  const f = judge(entries, answers, resolver, (s) => catalog.brand(s));
  console.log(
    `${name}: ${f.inCatalog} in the catalog, right ${f.right} (${pct(f.right, f.inCatalog)}); ${f.positives} with a brand, wrong brand ${f.wrong} (${pct(f.wrong, f.positives)}; ${f.lackingMatched} of the ${f.lacking} the catalog lacks); ${f.negatives} negatives, matched ${f.negativesMatched} (${pct(f.negativesMatched, f.negatives)})`,
  );
  if (name === "written against" || (all && name !== "whole list")) {
    for (const w of f.wrongs) console.log(`  WRONG ${w}`);
    for (const m of f.falseMatches) console.log(`  FALSE ${m}`);
    for (const m of f.misses) console.log(`  MISS  ${m}`);
  }
}
catalog.close();
