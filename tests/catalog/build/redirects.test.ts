import { describe, expect, test } from "bun:test";
import { applyRedirects, loadRedirects } from "../../../scripts/catalog/redirects";
import type { Brand } from "../../../src/catalog/built-catalog";
import { builtCatalog } from "../../support/catalog";

const brand = (slug: string) => ({ slug }) as Brand;

describe("retired slugs", () => {
  test("a redirect puts the retired slug on the brand it became; the rest are counted", () => {
    const brands = [brand("skoda"), brand("sprint")];
    const r = applyRedirects(
      brands,
      { skoda: 1, "skoda-auto": 2, sprint: 3, gone: 4 },
      {
        "skoda-auto": "skoda",
      },
    );
    expect(r).toEqual({ redirected: 1, unredirected: ["gone"], pairs: [["skoda-auto", "skoda"]] });
    expect(brands[0]?.formerSlugs).toEqual(["skoda-auto"]);
    expect(brands[1]?.formerSlugs).toBeUndefined();
  });

  test("a stale redirect fails the build", () => {
    const brands = [brand("skoda")];
    expect(() => applyRedirects(brands, {}, { skoda: "skoda" })).toThrow(/still a brand's slug/);
    expect(() => applyRedirects(brands, {}, { old: "nobody" })).toThrow(/which no brand has/);
  });

  test("the built catalog carries every redirect of the fixture", () => {
    const bySlug = new Map(builtCatalog().brands.map((b) => [b.slug, b]));
    const redirects = Object.entries(loadRedirects(`${import.meta.dir}/../../..`));
    expect(redirects.length).toBeGreaterThan(0);
    for (const [from, to] of redirects) {
      expect(bySlug.has(from)).toBe(false);
      expect(bySlug.get(to)?.formerSlugs).toContain(from);
    }
  });
});
