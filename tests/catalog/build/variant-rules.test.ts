/**
 * The variant rules (docs/assets.md) on real brands of the built catalog, checked on rendered
 * pixels (resvg), not on the SVG text.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import {
  foreignHues,
  hueBin,
  MIN_VISIBLE_SHARE,
  type PaintFacts,
  paintFactsAll,
  paintFactsOf,
} from "../../../scripts/catalog/paint";
import { popularBrands } from "../../../scripts/catalog/popular";
import { applyVariantRules, type RuleBrand } from "../../../scripts/catalog/variant-rules";
import { demultiply, squareFrame } from "../../../src/assets/render";
import { BrandResolver } from "../../../src/catalog/brand/service";
import type { Brand, BuiltCatalog, Variant } from "../../../src/catalog/built-catalog";
import { contrastRatio, rgbToHex } from "../../../src/catalog/colors";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { tempDir } from "../../support/app";

const ROOT = resolve(import.meta.dir, "../../..");
const FILE = process.env.CATALOG_FILE
  ? resolve(process.env.CATALOG_FILE)
  : join(ROOT, "build", "catalog.json");
const catalog: BuiltCatalog = JSON.parse(readFileSync(FILE, "utf8"));
const bySlug = new Map(catalog.brands.map((b) => [b.slug, b]));
// the catalog database of the same file, for the popular list's domain lookups
const served = new CatalogService(new FileCatalogSource(FILE));
await served.load();

interface Rendered {
  facts: PaintFacts;
  /** straight RGBA, 64 px on the longer side */
  pixels: Uint8Array;
}

function render(b: Brand, v: Variant): Rendered {
  const svg = b.variants[v]?.svg;
  if (!svg) throw new Error(`${b.slug} has no ${v}`);
  const img = new Resvg(squareFrame(svg) ?? svg, { fitTo: { mode: "width", value: 64 } }).render();
  const facts = paintFactsOf(img.pixels, img.width);
  return { facts, pixels: demultiply(new Uint8Array(img.pixels)) };
}

const brand = (slug: string) => {
  const b = bySlug.get(slug);
  if (!b) throw new Error(`no brand ${slug}`);
  return b;
};

/** The opaque pixels' colours, most frequent first. */
function paints(r: Rendered): string[] {
  const counts = new Map<string, number>();
  for (let i = 0; i < r.pixels.length; i += 4) {
    if ((r.pixels[i + 3] as number) < 255) continue;
    const hex = rgbToHex([r.pixels[i] ?? 0, r.pixels[i + 1] ?? 0, r.pixels[i + 2] ?? 0]);
    counts.set(hex, (counts.get(hex) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([hex]) => hex);
}

/** Intersection over union of two renders' painted (alpha > 0) pixels. */
function overlap(a: Rendered, b: Rendered): number {
  let both = 0;
  let either = 0;
  for (let i = 3; i < a.pixels.length; i += 4) {
    const pa = (a.pixels[i] as number) > 127;
    const pb = (b.pixels[i] as number) > 127;
    if (pa && pb) both++;
    if (pa || pb) either++;
  }
  return both / either;
}

/** Hue bins at least 20 degrees apart from each other. */
const distinctHues = (hues: number[]) =>
  hues.filter((h, i) => foreignHues([h], hues.slice(0, i)).length > 0).length;

describe("variant rules on famous brands (rendered pixels)", () => {
  test("Google, Slack and Microsoft stay multi-colour on dark", () => {
    for (const [slug, hues] of [
      ["google", 4],
      ["slack", 4],
      ["microsoft", 4],
    ] as const) {
      const dark = render(brand(slug), "dark");
      const color = render(brand(slug), "color");
      expect([slug, distinctHues(dark.facts.hues)]).toEqual([slug, hues]);
      expect(dark.facts.hues).toEqual(color.facts.hues);
      expect(dark.facts.dark).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
    }
  });

  test("a multi-colour mark under the floor on white is plain black there (Slack, Microsoft)", () => {
    for (const slug of ["slack", "microsoft"]) {
      const color = render(brand(slug), "color");
      expect(color.facts.light).toBeLessThan(MIN_VISIBLE_SHARE);
      const light = render(brand(slug), "light");
      expect([slug, paints(light)[0], light.facts.hues]).toEqual([slug, "000000", []]);
    }
    // Google's G reaches 3:1 on white over more than two thirds of its area: it stays
    const google = render(brand("google"), "light");
    expect(distinctHues(google.facts.hues)).toBe(4);
  });

  test("Coca-Cola and Nike: color is the mark in the brand colour, exactly", () => {
    for (const slug of ["cocacola", "nike"]) {
      const b = brand(slug);
      const color = render(b, "color");
      expect([slug, paints(color)[0]]).toEqual([slug, b.brandColor ?? ""]);
      expect(overlap(color, render(b, "mono"))).toBeGreaterThan(0.98);
    }
    // Coca-Cola red reaches 3:1 on #121212 and on white: the same red on both
    const coke = brand("cocacola");
    expect(contrastRatio(coke.brandColor as string, "121212")).toBeGreaterThanOrEqual(3);
    expect(paints(render(coke, "dark"))[0]).toBe(coke.brandColor as string);
    expect(paints(render(coke, "light"))[0]).toBe(coke.brandColor as string);
    // Nike's near-black does not: plain white on dark
    expect(paints(render(brand("nike"), "dark"))[0]).toBe("ffffff");
  });

  test("Stripe: color is the S in Stripe purple (the mono mark's shape), the wordmark is apart", () => {
    const stripe = brand("stripe");
    const color = render(stripe, "color");
    expect(overlap(color, render(stripe, "mono"))).toBeGreaterThan(0.98);
    expect(paints(color)[0]).toBe(stripe.brandColor as string);
    const wordmark = render(stripe, "wordmark");
    expect(overlap(color, wordmark)).toBeLessThan(0.5);
  });

  test("GitHub: the near-black mark reverses to white on dark, keeps its black on white", () => {
    const github = brand("github");
    const dark = render(github, "dark");
    expect(paints(dark)[0]).toBe("ffffff");
    expect(dark.facts.dark).toBe(1);
    const light = render(github, "light");
    expect(contrastRatio(paints(light)[0] as string, "ffffff")).toBeGreaterThan(15);
  });

  test("Spotify keeps its green on dark; on white, where it is under 3:1, it is black", () => {
    const spotify = brand("spotify");
    const green = hueBin(spotify.brandColor as string) as number;
    const dark = render(spotify, "dark");
    expect(foreignHues(dark.facts.hues, [green])).toEqual([]);
    expect(dark.facts.hues.length).toBeGreaterThan(0);
    expect(paints(render(spotify, "light"))[0]).toBe("000000");
  });

  test("Airbnb keeps its own coral on both backgrounds (no darker or purer red)", () => {
    const airbnb = brand("airbnb");
    const coral = paints(render(airbnb, "color"))[0] as string;
    expect(paints(render(airbnb, "light"))[0]).toBe(coral);
    expect(paints(render(airbnb, "dark"))[0]).toBe(coral);
    expect(render(airbnb, "light").facts.light).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
  });

  test("Netflix: color and icon are the N in Netflix red, with no black tile", () => {
    const netflix = brand("netflix");
    for (const v of ["color", "icon"] as const) {
      const r = render(netflix, v);
      expect([v, paints(r)[0]]).toEqual([v, netflix.brandColor ?? ""]);
      expect(paints(r)).not.toContain("000000");
    }
  });

  test("the 200 most popular brands: dark/light reach the floor and keep the brand's hues", async () => {
    const popular = popularBrands(ROOT, catalog.brands, 200, new BrandResolver(served));
    const svgs = [...new Set(popular.flatMap((b) => Object.values(b.variants).map((v) => v.svg)))];
    const measured = await paintFactsAll(svgs);
    const facts = new Map(svgs.map((svg, i) => [svg, measured[i]]));
    const problems: string[] = [];
    for (const b of popular) {
      const palette = new Set(
        Object.values(b.variants)
          .filter((v) => !/^(recolored|artwork):/.test(v.source))
          .flatMap((v) => facts.get(v.svg)?.hues ?? []),
      );
      const own = b.brandColor ? hueBin(b.brandColor) : null;
      if (!palette.size && own !== null) palette.add(own);
      for (const mode of ["dark", "light"] as const) {
        const v = b.variants[mode];
        if (!v) continue;
        const f = facts.get(v.svg);
        if (!f) problems.push(`${b.slug} ${mode} did not render`);
        else if (f[mode] < MIN_VISIBLE_SHARE) problems.push(`${b.slug} ${mode} under the floor`);
        const bad = foreignHues(f?.hues ?? [], palette);
        if (bad.length) problems.push(`${b.slug} ${mode} foreign hues ${bad}`);
      }
    }
    expect(problems).toEqual([]);
    expect(popular.length).toBe(200);
  });
});

describe("applyVariantRules", () => {
  const svg = (fill: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="#${fill}"/></svg>`;
  const mono = { svg: svg("000000"), source: "simple-icons" };
  const rules = (brands: RuleBrand[]) =>
    applyVariantRules(brands, { file: join(tempDir(), "paint.json"), version: "t" });

  test("a brand colour its artwork lacks never becomes the colour mark", async () => {
    const { results, report } = await rules([
      // artwork in green, brand colour purple: the purple mark would be a foreign hue
      {
        slug: "a",
        brandColor: "7a1fa2",
        raw: { mono, wordmark: { svg: svg("2e9e44"), source: "iconify:logos" } },
      },
      // no chromatic artwork: the brand colour is the brand's own
      { slug: "b", brandColor: "7a1fa2", raw: { mono } },
    ]);
    expect(results.get("a")?.color).toBeUndefined();
    expect(results.get("a")?.dark?.svg).toContain('fill="#ffffff"');
    expect(results.get("b")?.color?.svg).toContain('fill="#7a1fa2"');
    expect(report.fallbacks.some((f) => f.startsWith("a: color:"))).toBe(true);
    expect(report.foreign).toBe(0);
  });

  test("a near-white colour mark is the dark variant; color and icon are the plain black mark", async () => {
    const nearWhite = { svg: svg("e2e8f0"), source: "thesvg" };
    const yellow = { svg: svg("ffdb1e"), source: "iconify:logos" };
    const { results, report } = await rules([
      { slug: "t3", brandColor: "000000", raw: { mono, color: nearWhite, icon: nearWhite } },
      // a hue that fails on white is the brand's: it stays `color`, only `light` is black
      { slug: "lemon", brandColor: "ffdb1e", raw: { mono, color: yellow, icon: yellow } },
    ]);
    const t3 = results.get("t3");
    expect(t3?.dark?.svg).toBe(nearWhite.svg);
    expect(t3?.color?.svg).toContain('fill="#000000"');
    expect(t3?.icon?.svg).toBe(t3?.color?.svg as string);
    expect(t3?.light?.svg).toBe(t3?.color?.svg as string);
    expect(results.get("lemon")?.color).toBeUndefined();
    expect(results.get("lemon")?.light?.svg).toContain('fill="#000000"');
    expect(report.nearWhite).toBe(1);
  });

  test("a mark made for dark surfaces without a mono mark gets one with its white as ink", async () => {
    const pale = {
      svg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 10"><circle cx="5" cy="5" r="4" fill="#ffffff"/><circle cx="15" cy="5" r="4" fill="#bfe8df"/></svg>',
      source: "iconify:logos",
    };
    const asked: string[] = [];
    const black = pale.svg.replace(/fill="#[0-9a-f]{6}"/g, 'fill="#000000"');
    const { results } = await applyVariantRules(
      [{ slug: "pale", brandColor: "bfe8df", raw: { color: pale, icon: pale } }],
      { file: join(tempDir(), "paint.json"), version: "t" },
      (slug) => {
        asked.push(slug);
        return black;
      },
    );
    expect(asked).toEqual(["pale"]);
    expect(results.get("pale")?.mono?.source).toBe("flattened:iconify:logos");
    expect(results.get("pale")?.light?.svg).toContain('fill="#000000"');
    expect(results.get("pale")?.light?.rule).toBe("plain");
  });

  test("a source's mono mark drawn in white is that shape in black", async () => {
    const white = { svg: svg("ffffff"), source: "iconify:devicon" };
    const { results } = await rules([
      { slug: "w", brandColor: "ffffff", raw: { mono: white, color: white, icon: white } },
    ]);
    expect(results.get("w")?.mono?.source).toBe("recolored:iconify:devicon");
    expect(results.get("w")?.mono?.svg).toContain('fill="#000000"');
    expect(results.get("w")?.color?.svg).toContain('fill="#000000"');
  });

  test("a mono mark flattened from the wordmark never becomes `color`", async () => {
    const { results } = await rules([
      { slug: "w", brandColor: "ff0000", raw: { mono }, monoOfWordmark: true },
    ]);
    expect(results.get("w")?.color).toBeUndefined();
    expect(results.get("w")?.dark?.svg).toContain('fill="#ffffff"');
    expect(results.get("w")?.light?.svg).toContain('fill="#000000"');
  });

  test("a colour artwork of another design than the icon gives way to the icon", async () => {
    const lockup = {
      svg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 20"><circle cx="5" cy="5" r="4" fill="#2e9e44"/><rect y="12" width="10" height="3" fill="#2e9e44"/><rect y="17" width="10" height="3" fill="#2e9e44"/></svg>',
      source: "iconify:devicon",
    };
    const icon = { svg: svg("2e9e44"), source: "iconify:logos" };
    const { results, report } = await rules([
      { slug: "g", brandColor: "2e9e44", raw: { mono, color: lockup, icon } },
      // the same design in another rendition stays
      {
        slug: "h",
        brandColor: "2e9e44",
        raw: { mono, color: { svg: svg("2e9e44").replace('r="4"', 'r="3.9"'), source: "x" }, icon },
      },
    ]);
    expect(results.get("g")?.color).toEqual(icon);
    expect(results.get("h")?.color).toBeUndefined();
    expect(report.iconColor).toBe(1);
  });

  test("a source's own dark artwork wins; a solid colour mark gives the plain mark; else kept", async () => {
    const { results, report } = await rules([
      {
        slug: "c",
        brandColor: "111111",
        raw: {
          color: { svg: svg("111111"), source: "iconify:logos" },
          dark: { svg: svg("eeeeee"), source: "iconify:logos" },
        },
      },
    ]);
    expect(results.get("c")?.dark?.rule).toBe("source");
    expect(results.get("c")?.light?.rule).toBe("colour");
    // a solid colour mark without a mono mark: plain white of the colour mark itself
    const two =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="3" cy="5" r="3" fill="#111111"/><circle cx="7" cy="5" r="3" fill="#3a0a0a"/></svg>';
    const { results: r2 } = await rules([
      { slug: "d", brandColor: "111111", raw: { color: { svg: svg("111111"), source: "x" } } },
      { slug: "e", brandColor: "111111", raw: { color: { svg: two, source: "x" } } },
    ]);
    expect(r2.get("d")?.dark).toMatchObject({ rule: "plain", source: "recolored:x" });
    expect(r2.get("d")?.dark?.svg).toContain('fill="#ffffff"');
    // two dark colours and no single-colour mark: the artwork is kept, under the floor
    expect(r2.get("e")?.dark?.rule).toBe("below-floor");
    // a mono mark with white detail is not recoloured (it would be a white disc): kept too
    const detailed = {
      svg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/><circle cx="5" cy="5" r="2" fill="#fff"/></svg>',
      source: "iconify:logos",
    };
    const { results: r3 } = await rules([
      { slug: "f", brandColor: "111111", raw: { mono: detailed, color: detailed } },
    ]);
    expect(r3.get("f")?.dark?.rule).toBe("below-floor");
    expect(report.rules.dark.source).toBe(1);
  });
});
