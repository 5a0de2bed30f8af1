/**
 * The card-statement descriptor list (tests/catalog/lists/transactions.txt, written before the
 * matcher) against the real built catalog, in process: the right brand for at least 90% of the
 * descriptors whose brand the catalog has, a wrong brand for at most 1% of those naming a brand,
 * at most 2% of the descriptors that must not match matched. The figures are printed (and in
 * docs/transactions.md); the held-out quarter and the part written after the rules are
 * reported on their own.
 */
import { describe, expect, test } from "bun:test";
import { BrandResolver } from "../../../src/catalog/brand/service";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { TransactionMatcher } from "../../../src/catalog/transactions/service";
import { CATALOG_FILE } from "../../support/app";
import {
  type DescriptorEntry,
  expectedIds,
  type Figures,
  judge,
  pct,
  readDescriptorList,
} from "../lists/transactions";

const RIGHT = 0.9;
const WRONG = 0.01;
const NEGATIVES_MATCHED = 0.02;

const catalog = new CatalogService(new FileCatalogSource(CATALOG_FILE));
await catalog.load();
const resolver = new BrandResolver(catalog);
const matcher = new TransactionMatcher(catalog, resolver);
const list = readDescriptorList();
const bySlug = (slug: string) => catalog.brand(slug);

function figures(entries: DescriptorEntry[]): Figures {
  const answers = entries.map((e) => {
    const r = matcher.match(e);
    return r.brand ? { id: r.brand.id, slug: r.brand.slug } : null;
  });
  return judge(entries, answers, resolver, bySlug);
}
const all = figures(list);
const heldOut = figures(list.filter((e) => e.heldOut));
const second = figures(list.filter((e) => e.part === 2));
const line = (name: string, f: Figures) =>
  `${name}: right ${f.right}/${f.inCatalog} (${pct(f.right, f.inCatalog)}), wrong brand ${f.wrong}/${f.positives} (${pct(f.wrong, f.positives)}), negatives matched ${f.negativesMatched}/${f.negatives} (${pct(f.negativesMatched, f.negatives)})`;
console.log(line("descriptor list", all));
console.log(line("held-out quarter", heldOut));
console.log(line("second part", second));
if (all.wrongs.length) console.log(`wrong: ${all.wrongs.join("; ")}`);

describe("card-statement descriptors (tests/catalog/lists/transactions.txt)", () => {
  test("the list: at least 300 descriptors whose brand the catalog has, across 10 countries, and 100 that must not match", () => {
    const inCatalog = list.filter((e) => e.expected && expectedIds(e, resolver, bySlug).size);
    expect(inCatalog.length).toBeGreaterThanOrEqual(300);
    expect(new Set(inCatalog.map((e) => e.country)).size).toBeGreaterThanOrEqual(10);
    expect(list.filter((e) => e.expected === null).length).toBeGreaterThanOrEqual(100);
  });
  test(`the right brand for at least ${RIGHT * 100}% of those in the catalog (measured ${pct(all.right, all.inCatalog)})`, () => {
    expect(all.right / all.inCatalog).toBeGreaterThanOrEqual(RIGHT);
  });
  test(`a wrong brand for at most ${WRONG * 100}% (measured ${pct(all.wrong, all.positives)})`, () => {
    expect(all.wrong / all.positives).toBeLessThanOrEqual(WRONG);
  });
  test(`at most ${NEGATIVES_MATCHED * 100}% of the negatives matched (measured ${pct(all.negativesMatched, all.negatives)})`, () => {
    expect(all.negativesMatched / all.negatives).toBeLessThanOrEqual(NEGATIVES_MATCHED);
  });
});
