/** @thesvg/icons: parsing its modules, the licence filter and the merge, on its real data. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { DraftBrand } from "../../../scripts/catalog/icon-sets";
import { compactKey, siSlugify, TieredIndex } from "../../../scripts/catalog/keys";
import {
  exclusion,
  KEPT_LICENCES,
  loadTheSvg,
  parseTheSvgModule,
  type TheSvgIcon,
} from "../../../scripts/catalog/thesvg";
import { DRAWN_ELSEWHERE, mergeTheSvg } from "../../../scripts/catalog/thesvg-merge";
import { builtCatalog } from "../../support/catalog";
import { draft, iconCandidate } from "./steps/draft";

const ROOT = resolve(import.meta.dir, "../../..");
const DIST = join(ROOT, "node_modules/@thesvg/icons/dist");
const real = (slug: string) =>
  parseTheSvgModule(readFileSync(join(DIST, `${slug}.js`), "utf8")) as TheSvgIcon;

describe("thesvg modules", () => {
  test("the raw SVG and its variants are read, not the module's code", () => {
    const icon = real("1001tracklists");
    expect(icon.title).toBe("1001Tracklists");
    expect(icon.licence).toBe("CC0-1.0");
    expect(icon.url).toBe("https://www.1001tracklists.com");
    expect(icon.hex).toBe("40aef0");
    expect(icon.svg).toStartWith("<svg");
    expect(icon.svg).toEndWith("</svg>");
    expect(icon.mono).toStartWith("<svg");
  });
  test("an XML declaration before the SVG is dropped", () => {
    const icon = parseTheSvgModule(
      'export const slug = "a";\nexport const title = "A";\nexport const svg = `<?xml version="1.0"?>\n<!-- c -->\n<svg viewBox="0 0 1 1"><path d="M0 0h1v1z"/></svg>`;\nexport const license = "MIT";\n',
    );
    expect(icon?.svg).toBe('<svg viewBox="0 0 1 1"><path d="M0 0h1v1z"/></svg>');
    expect(parseTheSvgModule('export const slug = "a";\n')).toBeNull();
  });
  test("licences that allow modified copies are kept; every other group is counted", () => {
    expect(exclusion({ slug: "a", licence: "CC0-1.0" })).toBeNull();
    expect(exclusion({ slug: "a", licence: "Apache-2.0" })).toBeNull();
    expect(exclusion({ slug: "a", licence: "CC-BY-4.0" })).toBeNull();
    expect(exclusion({ slug: "a", licence: "CC-BY-ND-2.0" })).toBe("licence: no derivatives");
    expect(exclusion({ slug: "a", licence: "CC-BY-NC-SA-4.0" })).toBe("licence: non-commercial");
    expect(exclusion({ slug: "a", licence: "CC-BY-SA-4.0" })).toBe(
      "licence: share-alike or copyleft",
    );
    expect(exclusion({ slug: "a", licence: "brand-use" })).toContain("trademark");
    expect(exclusion({ slug: "a", licence: "Unknown" })).toBe("licence: unknown");
    expect(exclusion({ slug: "azure-scheduler", licence: "MIT" })).toBe(
      "cloud-service product icon",
    );
    expect(exclusion({ slug: "paypal-badge", licence: "CC0-1.0" })).toBe("app-tile badge");
  });
  test("the whole package: only kept licences, and the exclusions add up", () => {
    const { icons, excluded, total } = loadTheSvg(ROOT);
    expect(icons.length).toBeGreaterThan(4000);
    expect(icons.every((i) => KEPT_LICENCES.has(i.licence))).toBe(true);
    expect(icons.length + Object.values(excluded).reduce((a, b) => a + b, 0)).toBe(total);
    expect(excluded["licence: no derivatives"]).toBeGreaterThan(0);
  });
});

/** The merge's inputs from drafts, as merge.ts builds them. */
function indexOf(drafts: DraftBrand[]): TieredIndex<DraftBrand> {
  const index = new TieredIndex<DraftBrand>();
  for (const d of drafts) {
    index.add(0, d.slug, d);
    index.add(1, siSlugify(d.name), d);
    index.add(2, compactKey(d.name), d);
  }
  return index;
}

describe("thesvg merge", () => {
  test("a website names the brand first: nginx.org and NGINX on nginx.com stay one brand", () => {
    const nginx = draft("nginx", { name: "NGINX", sourceUrl: "https://nginx.org/" });
    const drafts = [nginx];
    const r = mergeTheSvg(drafts, [real("nginx")], indexOf(drafts), new Map());
    expect(r.byDomain).toBe(1);
    expect(drafts).toHaveLength(1);
    expect(nginx.thesvg?.slug).toBe("nginx");
  });
  test("a name match joins the brand whose websites are on the same label (Gatsby .org/.com)", () => {
    const gatsby = draft("gatsby", { sourceUrl: "https://www.gatsbyjs.com/guidelines/logo" });
    const drafts = [gatsby];
    const r = mergeTheSvg(drafts, [real("gatsby")], indexOf(drafts), new Map());
    expect(r.byName + r.byDomain).toBe(1);
    expect(gatsby.thesvg?.slug).toBe("gatsby");
  });
  test("namesakes stay apart: getmocha.com's Mocha is not the Mocha test framework", () => {
    const mocha = draft("mocha", { sourceUrl: "https://mochajs.org/" });
    const drafts = [mocha];
    const r = mergeTheSvg(drafts, [real("mocha")], indexOf(drafts), new Map());
    expect(r.clashes).toBe(1);
    expect(r.decisions[0]).toContain("namesake of mocha");
    expect(mocha.thesvg).toBeUndefined();
    expect(drafts).toHaveLength(1);
  });
  test("a website another brand holds beats the name", () => {
    const obs = draft("obs", { name: "OBS", sourceUrl: "https://obs.no" });
    const studio = draft("obsstudio", {
      name: "OBS Studio",
      keys: new Set(["obsstudio", "obs"]),
      sourceUrl: "https://obsproject.com",
    });
    const drafts = [obs, studio];
    mergeTheSvg(drafts, [real("obs")], indexOf(drafts), new Map());
    expect(studio.thesvg?.slug).toBe("obs");
    expect(obs.thesvg).toBeUndefined();
  });
  test("a directory company's slug goes to the icon only with the same website", () => {
    const drafts: DraftBrand[] = [];
    const directory = {
      slugs: new Map([
        ["animate", new Set(["animate.co.jp"])],
        ["bnp-paribas", new Set(["group.bnpparibas", "bnpparibas.fr"])],
      ]),
      byDomain: new Map<string, string | null>([["group.bnpparibas", "bnp-paribas"]]),
    };
    const icons = [real("animate"), real("bnp-paribas")];
    const r = mergeTheSvg(drafts, icons, indexOf(drafts), new Map(), directory);
    // Adobe's Animate is not the Japanese retailer Animate
    expect(r.decisions[0]).toContain("namesake of the directory's animate");
    expect(drafts.map((d) => d.slug)).toEqual(["bnp-paribas"]);
  });
});

/** A lobehub-only draft carrying the real lobehub icon `name`. */
const lobehub = (slug: string, name = slug, over: Partial<DraftBrand> = {}) =>
  draft(slug, {
    siSvg: null,
    sources: new Set(["lobehub"]),
    candidates: [iconCandidate("lobehub", name)],
    ...over,
  });

describe("thesvg icons that copy another brand's mark", () => {
  test("the same drawing as a lobehub icon is that icon's brand: Aya (Cohere) is Aya", () => {
    const aya = lobehub("aya");
    const drafts = [aya];
    const r = mergeTheSvg(drafts, [real("aya-cohere")], indexOf(drafts), new Map());
    expect(drafts.map((d) => d.slug)).toEqual(["aya"]);
    expect(aya.thesvg?.slug).toBe("aya-cohere");
    expect(r.decisions).toEqual(["thesvg aya-cohere -> merged into aya (Aya, by drawing)"]);
  });

  test("a reviewed namesake keeps its own brand: Dolphin (dphn.ai) is not the Dolphin emulator", () => {
    expect(DRAWN_ELSEWHERE["dolphin-dphnai"]).toBeDefined();
    const emulator = lobehub("dolphin", "dolphin", {
      sources: new Set(["simple-icons", "lobehub"]),
      sourceUrl: "https://dolphin-emu.org",
    });
    const drafts = [emulator];
    mergeTheSvg(drafts, [real("dolphin-dphnai")], indexOf(drafts), new Map());
    expect(emulator.thesvg).toBeUndefined();
    expect(drafts.map((d) => d.slug)).toEqual(["dolphin", "dolphin-dphnai"]);
  });

  test("a website fixtures/domain-overrides.json gives one brand: front.com is Frontapp's", () => {
    const frontapp = draft("frontapp", { name: "Frontapp", siSvg: null });
    const drafts = [frontapp];
    const curated = new Map([["front.com", "frontapp"]]);
    const r = mergeTheSvg(drafts, [real("front")], indexOf(drafts), new Map(), undefined, curated);
    expect(frontapp.thesvg?.slug).toBe("front");
    expect(r.decisions[0]).toContain("by curated domain");
    // without the curated domain the icon would be a brand of its own
    const alone = [draft("frontapp", { name: "Frontapp", siSvg: null })];
    mergeTheSvg(alone, [real("front")], indexOf(alone), new Map());
    expect(alone.map((d) => d.slug)).toEqual(["frontapp", "front"]);
  });

  test("former artwork joins no brand and makes none; the brand's own icon comes first", () => {
    const drafts: DraftBrand[] = [];
    const r = mergeTheSvg(
      drafts,
      [real("thesvg-legacy"), real("thesvg")],
      indexOf(drafts),
      new Map(),
    );
    expect(drafts.map((d) => [d.slug, d.thesvg?.slug])).toEqual([["thesvg", "thesvg"]]);
    expect(r.decisions).toContain(
      "thesvg thesvg-legacy -> left out: former artwork of thesvg (theSVG)",
    );
    // "Inflection AI" (a reviewed synonym) after Inflection's own icon, whatever the file order
    const inflection = lobehub("inflection");
    const both = [inflection];
    mergeTheSvg(both, [real("inflection-ai"), real("inflection")], indexOf(both), new Map());
    expect(inflection.thesvg?.slug).toBe("inflection");
  });
});

describe("thesvg in the built catalog", () => {
  const brands = builtCatalog().brands;
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  test("every brand with artwork records each variant's package, licence and upstream URL", () => {
    let checked = 0;
    for (const b of brands) {
      const variants = Object.keys(b.variants);
      if (!variants.length) continue;
      const covered: string[] = (b.artwork ?? []).flatMap((a) => a.variants);
      expect(covered.sort()).toEqual(variants.sort());
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    const thesvg = brands.flatMap((b) => b.artwork ?? []).filter((a) => a.source === "thesvg");
    expect(thesvg.length).toBeGreaterThan(390);
    for (const a of thesvg) {
      expect(KEPT_LICENCES.has(a.licence)).toBe(true);
      expect(a.url).toMatch(/^https:\/\/unpkg\.com\/@thesvg\/icons@[\d.]+\/dist\/[a-z0-9-]+\.js$/);
    }
  });
  test("namesakes stay apart and directory companies keep their slug and id", () => {
    expect(bySlug.get("animate")?.description).toContain("Japanese");
    expect(bySlug.get("animate")?.artwork).toBeUndefined();
    expect(bySlug.get("stc")?.domains).toEqual(["stc.se"]);
    const bnp = bySlug.get("bnp-paribas");
    expect(bnp?.id).toBe(7091);
    expect(bnp?.artwork?.[0]?.source).toBe("thesvg");
    expect(bySlug.has("twitter")).toBe(false);
    const nginxOrg = brands.filter((b) => b.domains.includes("nginx.org"));
    expect(nginxOrg.map((b) => b.slug)).toEqual(["nginx"]);
  });
});
