/**
 * The list of queries people type (tests/catalog/lists/queries.txt, written before looking at the
 * data) against the real built catalog's search: top-1 right for at least 95%.
 */
import { describe, expect, test } from "bun:test";
import { SearchIndex } from "../../../src/catalog/search/service";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { CATALOG_FILE } from "../../support/app";
import { isExpected, pct, readList } from "../lists/lists";

const BAR = 0.95;
const list = readList("queries.txt");
const source = new FileCatalogSource(CATALOG_FILE);
const catalog = new CatalogService(source);
await catalog.load();
const index = new SearchIndex(catalog);

const misses: string[] = [];
for (const { input, expected } of list) {
  const top = index.search(input, 5)[0];
  if (!top || !isExpected(top, expected)) misses.push(`${input} -> ${top ? top.slug : "(none)"}`);
}
const hits = list.length - misses.length;
const rate = hits / list.length;
console.log(
  `query list: top-1 ${hits}/${list.length} (${pct(hits, list.length)}); misses: ${misses.join(", ")}`,
);

describe("queries people type (tests/catalog/lists/queries.txt)", () => {
  test("the list has at least 150 entries", () => {
    expect(list.length).toBeGreaterThanOrEqual(150);
  });
  test(`top-1 right for at least ${BAR * 100}% (measured ${pct(hits, list.length)})`, () => {
    expect(rate).toBeGreaterThanOrEqual(BAR);
  });
});
