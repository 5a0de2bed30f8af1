/**
 * Artwork and merge rules checked on the real built catalog (build/catalog.json or
 * $CATALOG_FILE), on rendered pixels where the rule is about what a user sees:
 * near-white colour marks, wordmark-only brands' mono marks, artwork that draws nothing,
 * the directory's name merge and the resolver's other-suffix fallback.
 */
import { describe, expect, test } from "bun:test";
import { commonsFile, nameMergeAgrees } from "../../../scripts/catalog/nsi";
import { MIN_VISIBLE_SHARE, paintFactsAll } from "../../../scripts/catalog/paint";
import { undrawable } from "../../../scripts/catalog/variant-choice";
import { nearWhite } from "../../../scripts/catalog/variant-rules";
import { BrandResolver } from "../../../src/catalog/brand/service";
import type { Brand } from "../../../src/catalog/built-catalog";
import { CatalogService } from "../../../src/catalog/service";
import { builtCatalog, sharedCatalogSource } from "../../support/catalog";

const brands = builtCatalog().brands;
const bySlug = new Map(brands.map((b) => [b.slug, b]));
const brand = (slug: string): Brand => {
  const b = bySlug.get(slug);
  if (!b) throw new Error(`${slug} is not in the catalog`);
  return b;
};

describe("near-white colour marks", () => {
  test("T3 Stack: color and icon are the plain black mark, dark is its own near-white artwork", async () => {
    const b = brand("t3-stack");
    const [color, dark] = await paintFactsAll([
      b.variants.color?.svg ?? "",
      b.variants.dark?.svg ?? "",
    ]);
    expect(color?.light).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
    expect(color?.hues).toEqual([]);
    expect(b.variants.icon?.sha256).toBe(b.variants.color?.sha256 as string);
    expect(dark?.dark).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
    expect(b.variants.dark?.source).toBe("artwork:thesvg");
  });

  test("no brand's color is a near-white mark while its light variant is a plain black mark", async () => {
    const withPlainLight = brands.filter(
      (b) =>
        b.variants.color &&
        !b.variants.color.source.startsWith("recolored:") &&
        b.variants.light?.source.startsWith("recolored:"),
    );
    expect(withPlainLight.length).toBeGreaterThan(500);
    const facts = await paintFactsAll(withPlainLight.map((b) => b.variants.color?.svg ?? ""));
    const nearWhiteColor = withPlainLight
      .filter((_, i) => facts[i] && nearWhite(facts[i]))
      .map((b) => b.slug);
    expect(nearWhiteColor).toEqual([]);
  }, 120_000);
});

test("no single-colour mono mark is white or light grey (DataTables' devicon mark is black)", async () => {
  const withMono = brands.filter((b) => b.variants.mono);
  const facts = await paintFactsAll(withMono.map((b) => b.variants.mono?.svg ?? ""));
  const pale = withMono
    .filter((_, i) => {
      const f = facts[i];
      return f?.solid && !f.hues.length && f.light < MIN_VISIBLE_SHARE;
    })
    .map((b) => b.slug);
  expect(withMono.length).toBeGreaterThan(4000);
  expect(pale).toEqual([]);
  expect(brand("datatables").variants.mono?.source).toBe("recolored:iconify:devicon");
}, 120_000);

describe("wordmark-only brands", () => {
  const wordmarkOnly = brands.filter(
    (b) => b.variants.wordmark && !b.variants.color && !b.variants.icon,
  );

  test("CrowdStrike, AstraZeneca and Cathay Pacific get a single-colour mono mark from their wordmark", async () => {
    const slugs = ["crowdstrike", "astrazeneca", "cathay-pacific"];
    for (const slug of slugs) {
      expect(wordmarkOnly.map((b) => b.slug)).toContain(slug);
      expect(brand(slug).variants.mono?.source).toBe("flattened:thesvg");
    }
    const facts = await paintFactsAll(slugs.map((s) => brand(s).variants.mono?.svg ?? ""));
    expect(facts).toHaveLength(slugs.length);
    for (const f of facts) {
      expect(f?.solid).toBe(true);
      expect(f?.hues).toEqual([]);
      expect(f?.light).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
    }
  });

  test("every wordmark-only brand's mono mark is one solid colour with no hue, and none gets a color", async () => {
    const withMono = wordmarkOnly.filter((b) => b.variants.mono);
    expect(withMono.length).toBeGreaterThan(100);
    const facts = await paintFactsAll(withMono.map((b) => b.variants.mono?.svg ?? ""));
    const coloured = withMono.filter((_, i) => facts[i]?.hues.length).map((b) => b.slug);
    expect(coloured).toEqual([]);
  }, 120_000);
});

test("no stored SVG of any source draws nothing (zero-size viewBox, no shape)", () => {
  const bad: string[] = [];
  for (const b of brands) {
    for (const [variant, v] of Object.entries(b.variants)) {
      const why = v && undrawable(v.svg);
      if (why) bad.push(`${b.slug} ${variant}: ${why}`);
    }
  }
  expect(bad).toEqual([]);
});

describe("directory name merge needs agreement", () => {
  test("fresh.fr is its own directory entry again, not the Fresh web framework", () => {
    const entry = brand("fresh-q130214654");
    expect(entry.domains).toContain("fresh.fr");
    expect(entry.sources).toEqual(["name-suggestion-index"]);
    expect(brand("fresh").domains).not.toContain("fresh.fr");
    expect(brand("fresh").wikidata).toBeUndefined();
  });

  test("namesakes on a country site stay apart from software brands; national companies still merge", () => {
    const owner = new Map<string, string>();
    for (const b of brands) for (const d of b.domains) owner.set(d, b.slug);
    // software projects and apps (code-forge URLs, developer icon sets, generic domains)
    for (const [domain, notOwner] of [
      ["kodi.de", "kodi"],
      ["lovable.it", "lovable"],
      ["ted.bg", "ted"],
      ["prisma.fi", "prisma"],
      ["cockpit.co.th", "cockpit"],
      ["gemini.pl", "gemini"],
    ]) {
      expect(owner.get(domain as string)).toBeDefined();
      expect([domain, owner.get(domain as string)]).not.toEqual([domain, notOwner]);
    }
    // simple-icons companies without a domain, or with a national one
    expect(owner.get("aral.de")).toBe("aral");
    expect(owner.get("ah.be")).toBe("albertheijn");
    expect(owner.get("movistar.es")).toBe("movistar");
    expect(owner.get("bentleymotors.com")).toBe("bentley");
  });

  test("the rule", () => {
    const b = (over: Partial<Brand>) => ({
      sources: ["simple-icons"],
      sourceUrl: null,
      guidelinesUrl: null,
      domains: [],
      ...over,
    });
    expect(nameMergeAgrees(b({}), ["aral.de"])).toBe(true);
    expect(nameMergeAgrees(b({ sources: ["iconify:logos"] }), ["vector.co.nz"])).toBe(false);
    expect(
      nameMergeAgrees(b({ sourceUrl: "https://github.com/denoland/fresh/blob/x/logo.svg" }), [
        "fresh.fr",
      ]),
    ).toBe(false);
    expect(nameMergeAgrees(b({ domains: ["hdfcbank.com"] }), ["v.hdfcbank.com"])).toBe(true);
    expect(nameMergeAgrees(b({ domains: ["ah.nl"] }), ["ah.be"])).toBe(true);
    expect(nameMergeAgrees(b({ domains: ["kodi.tv"] }), ["kodi.de"])).toBe(false);
    expect(nameMergeAgrees(b({ domains: ["ted.com"] }), ["ted.bg"])).toBe(false);
    // a national site of the same label only where OSM maps the company in the brand's country
    expect(nameMergeAgrees(b({ domains: ["ah.nl"] }), ["ah.be"], ["be", "nl"])).toBe(true);
    expect(nameMergeAgrees(b({ domains: ["argos.co.uk"] }), ["argos.nl"], ["nl"])).toBe(false);
    expect(nameMergeAgrees(b({ domains: ["argos.co.uk"] }), ["argos.nl"], ["gb", "nl"])).toBe(true);
    expect(nameMergeAgrees(b({ domains: ["iris.co.uk"] }), ["iris.ca"], ["ca"])).toBe(false);
    expect(nameMergeAgrees(b({ domains: ["zoom.us"] }), ["zoom.red"], ["ve"])).toBe(false);
    expect(nameMergeAgrees(b({ domains: ["suzuki.ie"] }), ["suzuki.de"], ["001"])).toBe(true);
    // the brand's home page counts as its domain
    const max = b({ sourceUrl: "https://cycling74.com" });
    expect(nameMergeAgrees(max, ["maxburgers.com", "max.se"], ["se"])).toBe(false);
    expect(nameMergeAgrees(max, ["cycling74.com"])).toBe(true);
    // a source URL deeper in a site (a brand portal, a file on Commons) is not a home page
    const opel = b({ sourceUrl: "https://www.stellantis.com/en/brands/opel" });
    expect(nameMergeAgrees(opel, ["opel.de"], ["de"])).toBe(true);
  });

  test("Zoom, Argos, IRIS and Max are the brands their artwork shows; namesakes stay apart", () => {
    const cases: [string, string[], string, string[]][] = [
      // catalog brand, its domains, the namesake's slug, the namesake's domains
      ["zoom", ["zoom.us", "zoom.com"], "zoom-q109606671", ["zoom.red"]],
      ["argos", ["argos.co.uk"], "argos-q4750477", ["argos.nl"]],
      ["iris", ["iris.co.uk"], "iris-q121091944", ["iris.ca"]],
      ["max", [], "max-q1912172", ["maxburgers.com", "max.se"]],
    ];
    for (const [slug, own, namesake, theirs] of cases) {
      const b = brand(slug);
      const n = brand(namesake);
      expect(b.domains).toEqual(expect.arrayContaining(own));
      for (const d of theirs) expect(b.domains).not.toContain(d);
      expect(n.domains).toEqual(expect.arrayContaining(theirs));
      expect(n.wikidata).not.toBe(b.wikidata);
      expect(n.sources).toEqual(["name-suggestion-index"]);
    }
    // Argos the British retailer is the catalog brand (its own Wikidata item, by its domain)
    expect(brand("argos").description).toBe("British retail company");
    expect(brand("zoom").description).toBeUndefined();
    // freenet's German site is a curated domain: the company merges by it
    expect(brand("freenet").domains).toEqual(["freenet.ag", "freenet.de"]);
    expect(brand("freenet").wikidata).toBe("Q344744");
  });
});

describe("alias domains of a second Wikidata item with the same name and logo", () => {
  test("Shell plc's websites are Shell's (one logo file on Commons); its old slug redirects", () => {
    const shell = brand("shell");
    expect(shell.domains).toContain("shell.com");
    expect(shell.domains).toContain("shell.com.br");
    expect(Object.keys(shell.variants).length).toBeGreaterThan(0);
    expect(shell.formerSlugs).toContain("shell-q154950");
    expect(brand("lidl").domains).toEqual(expect.arrayContaining(["lidl.bg", "lidl.rs"]));
  });
  test("the Commons file name of a Wikidata logo URL", () => {
    expect(
      commonsFile("https://commons.wikimedia.org/wiki/Special:FilePath/Shell wordmark 2019.svg"),
    ).toBe("shell wordmark 2019.svg");
    expect(
      commonsFile(
        "https://commons.wikimedia.org/w/index.php?title=Special%3ARedirect%2Ffile%2FTesco%20logo.png&width=150",
      ),
    ).toBe("tesco logo.png");
    expect(commonsFile(undefined)).toBeUndefined();
  });
});

test("a generic suffix does not fall back to the .com brand's label (msf.org)", async () => {
  const catalog = new CatalogService(sharedCatalogSource());
  await catalog.load();
  const resolver = new BrandResolver(catalog);
  expect(resolver.resolveHost("msf.com")?.slug).toBe("mercantil");
  expect(resolver.resolveHost("msf.org")?.slug ?? null).not.toBe("mercantil");
  expect(resolver.resolveHost("google.co.uk")?.slug).toBe("google");
});
