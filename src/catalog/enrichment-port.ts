import type { ColorRole, StoredSvg, Variant } from "./types";

/**
 * What one enrichment job derived for one brand. Records are replayed over the catalog at
 * start and after every catalog reload; a record applies only while the brand's inputs still
 * hash to `basis` (a rebuilt mark or new colors make it stale, and the next request re-derives).
 */
export interface EnrichmentRecord {
  brandId: number;
  slug: string;
  /** sha256 of the brand's own inputs the record was derived from (see enrichmentBasis) */
  basis: string;
  /** when the job ran (ISO-8601 UTC) */
  at: string;
  /** when the brand's data passed the integrity checks, null when it did not */
  verifiedAt: string | null;
  darkModeColor: string | null;
  contrastTextColor: string | null;
  /** the brand's complete color roles (its own plus the derived ones) */
  colors: ColorRole[];
  /** derived variants only (source "derived:mono") */
  variants: Partial<Record<Variant, StoredSvg>>;
}

/** Where enrichment results persist: a JSONL log (embedded) or MongoDB. */
export interface EnrichmentStore {
  /** the latest record of every brand */
  all(): Promise<EnrichmentRecord[]>;
  /**
   * Store a record. When a record with the same brandId and basis is already stored (another
   * job or instance got there first), that one is kept and returned, so results converge.
   */
  save(record: EnrichmentRecord): Promise<EnrichmentRecord>;
}

/** How a discovery attempt for a domain ended (see catalog/discovery). */
export type DiscoveryStatus = "found" | "nothing" | "refused" | "failed" | "taken_down";

/** One stored artwork discovered on a brand's website, with where it came from. */
export interface DiscoveredAsset {
  /** the variant it is served as */
  variant: Variant;
  /** the URL fetched; for an SVG drawn inline in the page, the page's URL with #inline-svg */
  sourceUrl: string;
  /** ISO-8601 UTC */
  fetchedAt: string;
  /** sha256 hex of the bytes as fetched (before sanitizing or re-encoding) */
  sha256: string;
  kind: "svg" | "raster";
  /** the artwork's size as fetched (a raster's pixels; an SVG's viewBox, rounded) */
  width: number;
  height: number;
  /** the candidate's score (higher is better; see docs/discovery.md) */
  score: number;
  /** where in the page it was found: "link-icon-svg", "apple-touch-icon", "favicon.ico", ... */
  origin: string;
  /** a raster under 32 px kept because the site has nothing larger (replaced when it does) */
  lowRes?: boolean;
  /** BIMI: whether the mark certificate carries the same SVG (absent without a certificate) */
  verifiedMark?: boolean;
}

/**
 * The latest discovery attempt for one registrable domain. A "found" record carries the
 * artwork (and, for a domain no catalog brand has, the new brand's name, id and slug) and is
 * replayed over the catalog at start and after every reload, like enrichment records. A
 * "taken_down" record is permanent: the store never replaces it.
 */
export interface DiscoveryRecord {
  /** registrable domain, lowercase (the key) */
  domain: string;
  status: DiscoveryStatus;
  /** when the attempt ended (ISO-8601 UTC) */
  at: string;
  /** why nothing was stored (refused / failed / nothing), null when found */
  reason: string | null;
  /** the catalog brand the artwork belongs to (an existing one, or the one discovery made) */
  brandId: number | null;
  slug: string | null;
  /** true when discovery created the catalog entry (no catalog brand had the domain) */
  created: boolean;
  name: string | null;
  brandColor: string | null;
  /** the page the artwork was read from, after redirects */
  pageUrl: string | null;
  /** other registrable domains the site redirected to (recorded, not claimed) */
  aliases: string[];
  /** the home page's redirect chain (each URL that redirected), absent when it did not */
  redirects?: string[];
  variants: Partial<Record<Variant, StoredSvg>>;
  assets: DiscoveredAsset[];
  /** the operator who asked for this record (a takedown), absent for discovery's own */
  by?: string;
}

/** Where discovery results persist, beside the enrichment records (same adapters). */
export interface DiscoveryStore {
  /**
   * Every domain's latest record; with `since` (ISO-8601), only the records stored after it
   * (by this or another process or instance), for polling.
   */
  discoveries(since?: string): Promise<DiscoveryRecord[]>;
  discovery(domain: string): Promise<DiscoveryRecord | null>;
  /**
   * Store the domain's latest record, replacing the previous one unless that one is
   * "taken_down" (then nothing changes and the taken-down record is returned).
   */
  saveDiscovery(record: DiscoveryRecord): Promise<DiscoveryRecord>;
}
