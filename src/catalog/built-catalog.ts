/**
 * The built catalog: the artefact scripts/build-catalog.ts writes and both stores load.
 * Plain data, no framework types. SVG markup lives only in `variants`, never in JSON responses.
 */
export const VARIANTS = ["mono", "color", "dark", "light", "wordmark", "icon"] as const;
export type Variant = (typeof VARIANTS)[number];

export interface ColorRole {
  /** "brand" | "dark-mode" | "contrast-text" | "accent" ... */
  role: string;
  /** 6 lowercase hex characters, no leading # */
  hex: string;
  /** where the value came from: "simple-icons" | "artwork" | "derived" | "override" */
  source: string;
}

export interface StoredSvg {
  /** sanitized + svgo-optimized markup */
  svg: string;
  /** sha256 hex of the svg bytes */
  sha256: string;
  /** e.g. "simple-icons", "iconify:logos", "iconify:devicon", "derived" */
  source: string;
}

/** Where a brand's artwork comes from: one entry per source, with the variants drawn from it. */
export interface ArtworkSource {
  /** the source label stored on the variants ("simple-icons", "iconify:logos", "thesvg" ...) */
  source: string;
  /** npm package */
  package: string;
  /** SPDX identifier of the licence the artwork is used under */
  licence: string;
  /** the upstream project, or the exact upstream file where the licence is per file */
  url: string;
  variants: Variant[];
}

export interface Brand {
  id: number;
  slug: string;
  name: string;
  /** 6 lowercase hex, no # */
  brandColor: string | null;
  darkModeColor: string | null;
  /** "000000" or "ffffff" (whichever contrasts more with brandColor), null when brandColor is null */
  contrastTextColor: string | null;
  colors: ColorRole[];
  aliases: string[];
  /** registrable domains and hosts that name this brand, lowercase, no scheme (filled by the domain step) */
  domains: string[];
  sourceUrl: string | null;
  guidelinesUrl: string | null;
  /** data sets the brand was merged from */
  sources: string[];
  variants: Partial<Record<Variant, StoredSvg>>;
  /** ISO timestamp when the brand's data was last verified/enriched, or null */
  verifiedAt: string | null;
  /** one-line description (Wikidata's, via name-suggestion-index), where known */
  description?: string;
  /** Wikidata item id ("Q3884"), where known */
  wikidata?: string;
  /** official website and social profiles as URLs (website, facebook, instagram, x, youtube, linkedin, tiktok), where known */
  links?: Record<string, string>;
  /** retired slugs that answer with this brand (two entries merged: fixtures/slug-redirects.json) */
  formerSlugs?: string[];
  /** stock tickers of a listed company: "AAPL", "NASDAQ:AAPL", "7203.T", "TYO:7203" */
  tickers?: string[];
  /** provenance of the stored artwork, one entry per source (brands with artwork) */
  artwork?: ArtworkSource[];
  /**
   * the countries OpenStreetMap maps the company in (name-suggestion-index), ISO 3166-1 alpha-2
   * lower case; absent for a company mapped internationally or not mapped
   */
  countries?: string[];
  /** what OpenStreetMap maps it as ("amenity/fuel", "shop/supermarket"), from name-suggestion-index */
  categories?: string[];
}

export interface BuiltCatalog {
  /** content hash of the inputs and the builder; changes whenever the catalog changes */
  version: string;
  builtAt: string;
  brands: Brand[];
}
