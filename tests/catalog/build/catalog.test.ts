/** Checks on the real built catalog (build/catalog.json, or $CATALOG_FILE). */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { deriveMono } from "../../../scripts/catalog/mono";
import { renderFlags } from "../../../scripts/catalog/render-check";
import { SOURCE_LICENCES } from "../../../scripts/catalog/sources";
import type { Brand, BuiltCatalog } from "../../../src/catalog/built-catalog";
import { contrastRatio } from "../../../src/catalog/colors";
import { sanitizeAndOptimizeSvg } from "../../../src/catalog/sanitize";
import { nonBlackPaint } from "./paint-scan";
import { svgHazards } from "./svg-scan";

const ROOT = resolve(import.meta.dir, "../../..");
const FILE = process.env.CATALOG_FILE
  ? resolve(process.env.CATALOG_FILE)
  : join(ROOT, "build", "catalog.json");

if (!existsSync(FILE)) {
  const run = Bun.spawnSync(
    [process.execPath, join(ROOT, "scripts/build-catalog.ts"), "--if-stale"],
    {
      cwd: ROOT,
      stderr: "inherit",
      env: process.env,
    },
  );
  if (run.exitCode !== 0) throw new Error("catalog build failed");
}
const catalog: BuiltCatalog = JSON.parse(readFileSync(FILE, "utf8"));
const brands = catalog.brands;
const bySlug = new Map(brands.map((b) => [b.slug, b]));
const ids: Record<string, number> = JSON.parse(
  readFileSync(join(ROOT, "fixtures/brand-ids.json"), "utf8"),
);
const domainOwner = new Map<string, string>();
for (const b of brands) for (const d of b.domains) domainOwner.set(d, b.slug);

describe("built catalog", () => {
  test("has a version and build time", () => {
    expect(catalog.version).toMatch(/^[0-9a-f]{16,}$/);
    expect(Number.isNaN(Date.parse(catalog.builtAt))).toBe(false);
  });

  test("at least 4000 brands, at least 1500 with a color variant", () => {
    expect(brands.length).toBeGreaterThanOrEqual(4000);
    expect(brands.filter((b) => b.variants.color).length).toBeGreaterThanOrEqual(1500);
  });

  test("unique URL-safe slugs and unique ids that match fixtures/brand-ids.json", () => {
    expect(new Set(brands.map((b) => b.slug)).size).toBe(brands.length);
    expect(new Set(brands.map((b) => b.id)).size).toBe(brands.length);
    for (const b of brands) {
      expect(b.slug).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
      expect(ids[b.slug]).toBe(b.id);
    }
  });

  test("iconify-only brands joined", () => {
    for (const slug of ["slack", "microsoft", "openai", "salesforce"]) {
      const b = bySlug.get(slug) as Brand;
      expect(b).toBeDefined();
      expect(b.sources.some((s) => s.startsWith("iconify:"))).toBe(true);
      expect(Object.keys(b.variants).length).toBeGreaterThan(0);
    }
    expect(bySlug.get("slack")?.variants.color).toBeDefined();
    expect(bySlug.get("slack")?.variants.wordmark).toBeDefined();
    expect(bySlug.get("slack")?.variants.icon).toBeDefined();
  });

  test("merged brands keep the simple-icons mark and gain artwork", () => {
    const github = bySlug.get("github") as Brand;
    expect(github.variants.mono?.source).toBe("simple-icons");
    expect(github.brandColor).toBe("181717");
    const stripe = bySlug.get("stripe") as Brand;
    expect(stripe.sources).toContain("simple-icons");
    expect(stripe.sources).toContain("iconify:logos");
    expect(bySlug.get("meta")?.slug).not.toBe(bySlug.get("metabase")?.slug);
  });

  test("colours: 6 lowercase hex everywhere, roles consistent", () => {
    expect(brands.filter((b) => b.brandColor !== null).length).toBeGreaterThan(0);
    for (const b of brands) {
      if (b.brandColor === null) continue;
      expect(b.brandColor).toMatch(/^[0-9a-f]{6}$/);
      expect(b.darkModeColor).toMatch(/^[0-9a-f]{6}$/);
      expect(["000000", "ffffff"]).toContain(b.contrastTextColor as string);
      expect(b.colors.map((c) => c.role)).toEqual(["brand", "dark-mode", "contrast-text"]);
      expect(b.colors[0]?.hex).toBe(b.brandColor);
      for (const c of b.colors) expect(c.hex).toMatch(/^[0-9a-f]{6}$/);
    }
    expect(brands.every((b) => b.brandColor === null || /^[0-9a-f]{6}$/.test(b.brandColor))).toBe(
      true,
    );
  });

  test("every brand with a symbol has dark and light variants from the build; verifiedAt is null", () => {
    const rootFill = (svg: string) => /^<svg[^>]*\sfill="#([0-9a-f]{6})"/.exec(svg)?.[1];
    const weak: string[] = [];
    expect(brands.length).toBeGreaterThan(0);
    for (const b of brands) {
      expect(b.verifiedAt).toBeNull();
      // directory entries have no artwork at all: the API serves the placeholder
      if (b.sources.length === 1 && b.sources[0] === "name-suggestion-index") {
        expect(b.variants).toEqual({});
        continue;
      }
      const { dark, light, color, mono, icon } = b.variants;
      // a brand whose only artwork is a wordmark has no symbol variants (docs/assets.md); its
      // mono mark is the flattened wordmark, and dark/light are that mark in white and black
      // when it is one solid colour on pixels (hairline lettering is not: Rum)
      if (!color && !mono) continue;
      if (!color && !icon && !dark && !light) continue;
      expect([b.slug, dark?.source]).toEqual([
        b.slug,
        // a source's own reversed artwork: logos' "-dark" marks, web3icons' white-only marks
        expect.stringMatching(/^(recolored:|artwork:|iconify:logos$|web3icons$)/),
      ]);
      expect([b.slug, light?.source]).toEqual([
        b.slug,
        expect.stringMatching(/^(recolored|artwork):/),
      ]);
      // a recoloured single-colour mark reaches the graphics floor, 3:1, on its background
      for (const [v, surface] of [
        [dark, "121212"],
        [light, "ffffff"],
      ] as const) {
        const fill = v?.source.startsWith("recolored:") ? rootFill(v.svg) : undefined;
        if (fill && contrastRatio(fill, surface) < 3)
          weak.push(`${b.slug} on #${surface}: #${fill}`);
      }
    }
    expect(weak).toEqual([]);
    // a source's own reversed artwork wins: logos draws Vite for dark backgrounds
    expect(bySlug.get("vite")?.variants.dark?.source).toBe("iconify:logos");
    // grey and black brands reverse to white on dark backgrounds
    for (const slug of ["github", "apple", "x", "notion", "vercel", "openai"]) {
      expect([slug, bySlug.get(slug)?.darkModeColor]).toEqual([slug, "ffffff"]);
    }
  });

  test("darkModeColor reaches 4.5:1 on #121212 for every brand", () => {
    const weak = brands.filter(
      (b) => b.darkModeColor && contrastRatio(b.darkModeColor, "121212") < 4.5,
    );
    expect(weak.map((b) => `${b.slug} ${b.darkModeColor}`)).toEqual([]);
    expect(
      contrastRatio(bySlug.get("atlassian")?.darkModeColor as string, "121212"),
    ).toBeGreaterThanOrEqual(4.5);
  });

  test("the render check's defects are fixed: Instagram in colour, Netflix without its square", () => {
    const instagram = bySlug.get("instagram") as Brand;
    const netflix = bySlug.get("netflix") as Brand;
    expect(renderFlags(instagram.variants.color?.svg as string, instagram.brandColor)).toEqual([]);
    // the gradient survives: its url(#id) points at a gradient kept in the same SVG
    const svg = instagram.variants.color?.svg as string;
    const ref = /url\(#([^)]+)\)/.exec(svg)?.[1] as string;
    expect(svg).toMatch(new RegExp(`<(linearGradient|radialGradient)[^>]*id="${ref}"`));
    expect(renderFlags(netflix.variants.color?.svg as string, netflix.brandColor)).toEqual([]);
  });

  test("no brand of the earlier catalog (ids 1..4366) is lost to a merge, except a duplicate folded into the brand it draws", () => {
    const lost = Object.entries(ids)
      .filter(([slug, id]) => id <= 4366 && !bySlug.has(slug))
      .map(([slug]) => slug);
    // a folded entry ("Cc Stripe", "Google Bard", devicon's "UML") answers as the brand it became
    const unanswered = lost.filter((slug) => !brands.some((b) => b.formerSlugs?.includes(slug)));
    expect(unanswered).toEqual([]);
    expect(lost.length).toBeLessThan(150);
  });

  test("brands from the added sets, each stored SVG with a source that has a licence", () => {
    expect(brands.length).toBeGreaterThanOrEqual(5000);
    for (const b of brands) {
      for (const v of Object.values(b.variants)) {
        const source = v.source.replace(/^((recolored|artwork|flattened):)+/, "");
        expect([b.slug, SOURCE_LICENCES[source]?.licence]).toEqual([b.slug, expect.any(String)]);
      }
    }
    for (const set of [
      "lobehub",
      "iconify:cib",
      "iconify:fa6-brands",
      "iconify:streamline-logos",
    ]) {
      expect([set, brands.some((b) => b.sources.length === 1 && b.sources[0] === set)]).toEqual([
        set,
        true,
      ]);
    }
    // lobehub brings AI companies with their own casing and colour, mono and text marks
    const lobe = brands.filter((b) => b.sources.includes("lobehub"));
    expect(lobe.length).toBeGreaterThan(300);
    expect(bySlug.get("deepseek")?.variants.mono).toBeDefined();
  });

  test("every stored SVG is clean, has a viewBox and a matching sha256", () => {
    let count = 0;
    const bad: string[] = [];
    for (const b of brands) {
      for (const [variant, stored] of Object.entries(b.variants)) {
        count++;
        const problems = svgHazards(stored.svg);
        if (problems.length) bad.push(`${b.slug}/${variant}: ${problems.join(", ")}`);
        const sum = new Bun.CryptoHasher("sha256").update(stored.svg).digest("hex");
        if (sum !== stored.sha256) bad.push(`${b.slug}/${variant}: sha256 mismatch`);
      }
    }
    expect(count).toBeGreaterThan(7000);
    expect(bad).toEqual([]);
  });

  test("ids inside each SVG are prefixed per brand and variant", () => {
    let ids = 0;
    for (const b of brands) {
      for (const [variant, stored] of Object.entries(b.variants)) {
        for (const m of stored.svg.matchAll(/\sid="([^"]+)"/g)) {
          ids++;
          expect(m[1]?.startsWith(`${variant}-${b.slug}-`)).toBe(true);
        }
      }
    }
    expect(ids).toBeGreaterThan(0);
  });

  test("brands with no mono mark of their own get a derived one (when no set draws one)", () => {
    // a set that draws the mark in one colour comes first: Slack from CoreUI brands
    expect(bySlug.get("slack")?.variants.mono?.source).toBe("iconify:cib");
    for (const slug of ["activecampaign", "amplitude"]) {
      const mono = bySlug.get(slug)?.variants.mono;
      // flattened from the brand's own icon; never "derived*", the enrichment's own marker
      expect(mono?.source).toBe("flattened:iconify:logos");
      expect(nonBlackPaint(mono?.svg ?? "")).toEqual([]);
      expect(svgHazards(mono?.svg ?? "")).toEqual([]);
      // still the brand's own artwork: as many shapes as the icon, same viewBox
      const icon = bySlug.get(slug)?.variants.icon?.svg ?? "";
      expect(/viewBox="[^"]+"/.exec(mono?.svg ?? "")?.[0]).toBe(
        /viewBox="[^"]+"/.exec(icon)?.[0] as string,
      );
    }
  });

  test("every derived mono mark is black or none only and clean", () => {
    const derived = brands.filter((b) => b.variants.mono?.source.startsWith("flattened:"));
    // flattened from the symbol only: a wordmark never becomes a mono mark (docs/assets.md)
    expect(derived.length).toBeGreaterThan(250);
    const bad = derived.flatMap((b) => {
      const svg = b.variants.mono?.svg ?? "";
      const problems = [...nonBlackPaint(svg), ...svgHazards(svg)];
      return problems.length ? [`${b.slug}: ${problems.join(", ")}`] : [];
    });
    expect(bad).toEqual([]);
    // derived only where no data set has a mono mark
    for (const b of derived) expect(b.sources.includes("simple-icons")).toBe(false);
  });

  test("artwork that draws detail in white is not derived (Salesforce's white lettering)", () => {
    const salesforce = bySlug.get("salesforce") as Brand;
    // its mono mark is CoreUI's single-colour drawing, not a flattening of the colour artwork
    expect(salesforce.variants.mono?.source).toBe("iconify:cib");
    for (const variant of ["icon", "color"] as const) {
      const svg = salesforce.variants[variant]?.svg ?? "";
      expect(deriveMono(sanitizeAndOptimizeSvg(svg, "t"))).toHaveProperty("skipped");
    }
  });

  test("curated aliases are present", () => {
    expect(bySlug.get("visualstudiocode")?.aliases).toEqual(
      expect.arrayContaining(["VS Code", "VSCode"]),
    );
    expect(bySlug.get("googlecloud")?.aliases).toContain("GCP");
    expect(bySlug.get("amazonwebservices")?.aliases).toContain("AWS");
    expect(bySlug.get("kubernetes")?.aliases).toContain("K8s");
  });

  test("at least 3000 brands with a domain, and no domain claimed twice", () => {
    expect(brands.filter((b) => b.domains.length > 0).length).toBeGreaterThanOrEqual(3000);
    const all = brands.flatMap((b) => b.domains);
    expect(new Set(all).size).toBe(all.length);
    for (const d of all) expect(d).toMatch(/^[a-z0-9.-]+\.[a-z0-9-]+$/);
  });

  test("well-known domains resolve to the right brand", () => {
    const expected: Record<string, string> = {
      "github.com": "github",
      "stripe.com": "stripe",
      "slack.com": "slack",
      "microsoft.com": "microsoft",
      "shopify.com": "shopify",
      "google.com": "google",
      "apple.com": "apple",
      "netflix.com": "netflix",
      "openai.com": "openai",
      "salesforce.com": "salesforce",
      "atlassian.com": "atlassian",
      "notion.so": "notion",
      "figma.com": "figma",
      "vercel.com": "vercel",
      "cloudflare.com": "cloudflare",
      "paypal.com": "paypal",
      "spotify.com": "spotify",
      "dropbox.com": "dropbox",
      "zoom.us": "zoom",
      "adobe.com": "adobe",
      "linkedin.com": "linkedin",
      "twitter.com": "x",
      "x.com": "x",
      "facebook.com": "facebook",
      "meta.com": "meta",
      "youtube.com": "youtube",
      "mail.google.com": "gmail",
      "drive.google.com": "googledrive",
      "kafka.apache.org": "apachekafka",
      "apache.org": "apache",
      "algolia.com": "algolia",
    };
    for (const [domain, slug] of Object.entries(expected)) {
      expect(`${domain} -> ${domainOwner.get(domain)}`).toBe(`${domain} -> ${slug}`);
    }
  });

  test("no brand owns a customer subdomain of a brand portal or help desk", () => {
    const tenant =
      /\.(frontify\.com|notion\.site|widencollective\.com|zendesk\.com|mediaroom\.com)$/;
    expect([...domainOwner.keys()].filter((d) => tenant.test(d))).toEqual([]);
  });
});
