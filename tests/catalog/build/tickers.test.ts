import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import {
  attachTickers,
  type ListedCompany,
  loadListedCompanies,
  withoutLegalForm,
} from "../../../scripts/catalog/tickers";
import { builtCatalog } from "../../support/catalog";
import { brandOf } from "./steps/draft";

const ROOT = resolve(import.meta.dir, "../../..");

const brand = (slug: string, name: string, domains: string[]) =>
  brandOf(slug, { name, domains, sources: ["name-suggestion-index"] });
const company = (name: string, website: string | null, tickers: string[]): ListedCompany => ({
  name,
  website,
  country: null,
  symbol: tickers[0] as string,
  tickers,
});

describe("listed companies", () => {
  test("legal forms come off the name", () => {
    expect(withoutLegalForm("Apple Inc.")).toBe("Apple");
    expect(withoutLegalForm("Tesla, Inc.")).toBe("Tesla");
    expect(withoutLegalForm("Eli Lilly and Company")).toBe("Eli Lilly");
    expect(withoutLegalForm("Siemens Healthineers AG")).toBe("Siemens Healthineers");
  });
  test("the generated file: companies with tickers in both forms", () => {
    const all = loadListedCompanies(ROOT);
    expect(all.length).toBeGreaterThan(1800);
    const toyota = all.find((c) => c.symbol === "7203.T");
    expect(toyota?.tickers).toEqual(["7203.T", "TYO:7203"]);
  });
  test("by website, then by name; namesakes without a website stay apart", () => {
    const apple = brand("apple", "Apple", ["apple.com"]);
    const alamo = brand("alamo", "Alamo", ["alamo.com"]);
    const kroger = brand("kroger", "Kroger", ["kroger.com"]);
    const r = attachTickers(
      [apple, alamo, kroger],
      [
        company("Apple Inc.", "apple.com", ["AAPL", "NASDAQ:AAPL"]),
        // Alamo Group (farm machinery) is not Alamo the car rental
        company("Alamo Group", null, ["ALG"]),
        company("Kroger", null, ["KR"]),
        company("Acme Widgets Inc.", "acmewidgets.com", ["ACME"]),
      ],
    );
    expect(apple.tickers).toEqual(["AAPL", "NASDAQ:AAPL"]);
    expect(alamo.tickers).toBeUndefined();
    expect(kroger.tickers).toEqual(["KR"]);
    expect(r.entries.map((e) => [e.slug, e.name, e.domains])).toEqual([
      ["acme-widgets", "Acme Widgets", ["acmewidgets.com"]],
    ]);
    expect(r.unmatched).toBe(1);
  });
  test("the built catalog: tickers on the companies they name", () => {
    const bySlug = new Map(builtCatalog().brands.map((b) => [b.slug, b]));
    expect(bySlug.get("apple")?.tickers).toContain("AAPL");
    expect(bySlug.get("toyota")?.tickers).toContain("7203.T");
    expect(bySlug.get("alamo")?.tickers).toBeUndefined();
  });
});
