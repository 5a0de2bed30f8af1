/**
 * The popularity list of the artwork review sheet and figures (docs/catalog-build.md,
 * "Artwork fidelity"): brands with artwork in the order of fixtures/popular-domains.json (the
 * Moz Top 500 domains, from the npm package top-sites, MIT), each domain resolved to its brand
 * as GET /v1/brand does; after those, the rest by the search ranking's popularity (icon sets
 * that draw the brand, plus one for a domain), ties by id.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BrandResolver } from "../../src/catalog/brand/service";
import type { Brand } from "../../src/catalog/built-catalog";
import { popularityOf } from "../../src/catalog/search/service";
import { CatalogService } from "../../src/catalog/service";

export const POPULAR_DOMAINS_FILE = "fixtures/popular-domains.json";

/**
 * The `n` most popular brands with artwork. `resolver`: domains to brands over the same
 * catalog (default: one over a database of `brands` written for the call).
 */
export function popularBrands(
  root: string,
  brands: readonly Brand[],
  n: number,
  resolver: Pick<BrandResolver, "resolveHost"> = new BrandResolver(CatalogService.of(brands)),
): Brand[] {
  const { domains }: { domains: string[] } = JSON.parse(
    readFileSync(join(root, POPULAR_DOMAINS_FILE), "utf8"),
  );
  const withArt = brands.filter((b) => Object.keys(b.variants).length > 0);
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const out = new Set<Brand>();
  for (const domain of domains) {
    const found = resolver.resolveHost(domain.replace(/^www\./, ""));
    const brand = found && bySlug.get(found.slug);
    if (brand && Object.keys(brand.variants).length > 0) out.add(brand);
  }
  const rest = withArt
    .filter((b) => !out.has(b))
    .sort((a, b) => popularityOf(b) - popularityOf(a) || a.id - b.id);
  return [...out, ...rest].slice(0, n);
}
