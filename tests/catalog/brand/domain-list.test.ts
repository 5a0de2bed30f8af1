/**
 * The list of well-known company domains (tests/catalog/lists/domains.txt, written before looking
 * at the data, grown with 200 non-technology companies) against the real built
 * catalog: at least 92% of the first list resolve (its bar), at least 90% of the whole list
 * (the whole list's bar), and none to a wrong brand.
 */
import { describe, expect, test } from "bun:test";
import { normalizeHost } from "../../../src/catalog/brand/domain";
import { BrandResolver } from "../../../src/catalog/brand/service";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { CATALOG_FILE } from "../../support/app";
import { isExpected, pct, readList } from "../lists/lists";

const BAR = 0.9;
const FIRST_LIST_BAR = 0.92;
const list = readList("domains.txt");
const source = new FileCatalogSource(CATALOG_FILE);
const catalog = new CatalogService(source);
await catalog.load();
const resolver = new BrandResolver(catalog);

const missing: string[] = [];
const wrong: string[] = [];
for (const { input, expected } of list) {
  const h = normalizeHost(input);
  const brand = h.ok ? resolver.resolveHost(h.host) : null;
  if (!brand) missing.push(input);
  else if (!isExpected(brand, expected)) wrong.push(`${input} -> ${brand.slug} (${brand.name})`);
}
const resolved = list.length - missing.length;
const rate = resolved / list.length;
const first = list.filter((e) => e.part === 1);
const firstResolved = first.filter((e) => !missing.includes(e.input)).length;
console.log(
  `domain list: ${resolved}/${list.length} resolve (${pct(resolved, list.length)}), ${wrong.length} wrong; missing: ${missing.join(" ")}`,
);

describe("well-known company domains (tests/catalog/lists/domains.txt)", () => {
  test("the list has at least 300 entries", () => {
    expect(list.length).toBeGreaterThanOrEqual(300);
  });
  test("none resolves to a wrong brand", () => {
    expect(wrong).toEqual([]);
  });
  test(`the first list (${first.length}): at least ${FIRST_LIST_BAR * 100}% resolve (measured ${pct(firstResolved, first.length)})`, () => {
    expect(first.length).toBeGreaterThanOrEqual(300);
    expect(firstResolved / first.length).toBeGreaterThanOrEqual(FIRST_LIST_BAR);
  });
  // the whole list's bar
  test(`at least ${BAR * 100}% resolve (measured ${pct(resolved, list.length)})`, () => {
    expect(rate).toBeGreaterThanOrEqual(BAR);
  });
});
