import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildPaths } from "../../../../scripts/catalog/steps/context";
import { type BuildOutcome, writeCatalog } from "../../../../scripts/catalog/steps/write";
import type { Brand } from "../../../../src/catalog/built-catalog";
import { tempDir } from "../../../support/temp";

const ROOT = resolve(import.meta.dir, "../../../..");

test("the catalog, report and attribution are written with the inputs' version", () => {
  const dir = tempDir();
  const paths = {
    ...buildPaths(ROOT, join(dir, "catalog.json")),
    attributionFile: join(dir, "a.md"),
  };
  const svg = { svg: "<svg/>", sha256: "x", source: "simple-icons" };
  const brands = [
    {
      id: 1,
      slug: "acme",
      name: "Acme",
      brandColor: "ff0000",
      darkModeColor: null,
      contrastTextColor: null,
      colors: [],
      aliases: [],
      domains: ["acme.com"],
      sourceUrl: null,
      guidelinesUrl: null,
      sources: ["simple-icons"],
      variants: { mono: svg },
      verifiedAt: null,
    },
  ] satisfies Brand[];
  const outcome: BuildOutcome = {
    merged: { stats: { simpleIcons: 1, logosNewBrands: 0 }, decisions: ["logos acme -> merged"] },
    variants: {
      monoReport: {
        fromIcon: 0,
        fromColor: 0,
        fromWordmark: 0,
        fromDarkSurface: 0,
        forced: 0,
        skipped: new Map([["acme", "override: x"]]),
      },
      rules: {
        madeColor: 0,
        nearWhite: 0,
        iconColor: 0,
        rules: {
          dark: { source: 0, colour: 0, plain: 1, "below-floor": 0 },
          light: { source: 0, colour: 1, plain: 0, "below-floor": 0 },
        },
        measured: 1,
        rendered: 0,
        checked: 0,
        foreign: 0,
        fallbacks: [],
        belowFloor: [],
      },
      colorFromArtwork: 0,
      checked: 0,
      misses: 0,
      renderFlags: [],
    },
    enriched: {
      domains: { brandsWithDomain: 1, domains: 1, contested: [], unknownOverrideSlugs: [] },
      directory: { entries: [], merged: 0, joined: [], report: [], candidates: 0 },
      tickers: {
        byDomain: 1,
        byName: 0,
        entries: [],
        unmatched: 0,
        report: ["ACME Acme Inc. -> acme by domain"],
      },
    },
  };
  const version = writeCatalog(paths, brands, outcome);
  const catalog = JSON.parse(readFileSync(paths.catalogFile, "utf8"));
  expect(catalog.version).toBe(version);
  expect(catalog.brands).toEqual(brands);
  const report = readFileSync(join(dir, "catalog-report.txt"), "utf8");
  expect(report).toStartWith("brands: 1 (1 with artwork, 0 directory entries without artwork)");
  expect(report).toContain("variants: mono 1, color 0");
  expect(report).toContain("acme: override: x");
  expect(report).toContain("logos acme -> merged");
  expect(report).toContain("ACME Acme Inc. -> acme by domain");
  expect(readFileSync(paths.attributionFile, "utf8")).toContain("| `simple-icons` |");
});
