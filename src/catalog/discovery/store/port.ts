import type { StoredSvg, Variant } from "../../built-catalog";
import type { WebChannel } from "../../provenance";

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
  /** BIMI: whether the mark certificate passed every check (absent without a certificate) */
  verifiedMark?: boolean;
  /**
   * how it was obtained: "bimi-verified", "bimi", "website" (https) or "website-http" (plain
   * http: never verified; replaced by the first later success over https). Absent on records
   * stored before provenance was recorded (read as "website", or "bimi" for origin "bimi").
   */
  provenance?: WebChannel;
  /** the response's ETag and Last-Modified, for the refresh's conditional GETs */
  etag?: string;
  lastModified?: string;
}

/** One failed check of a BIMI mark certificate (see catalog/discovery/mark.ts). */
export interface MarkFailure {
  /** certificate, chain, self_signed, validity, usage, domain, logotype or hash */
  check: string;
  reason: string;
}

/** A domain's BIMI record and how its logo and mark certificate fared. */
export interface BimiCheck {
  /** the record's l= URL */
  logo: string;
  /** the record's a= URL, null when it names no certificate */
  certificate: string | null;
  /** true only when the certificate passed every check */
  verifiedMark: boolean;
  /** each failed check of the certificate, by name ([] when verified or without one) */
  failed: MarkFailure[];
  /** why the logo itself is not used (not https, too large, not square ...), absent when it is */
  unusable?: string;
  /** the certificate's subject organisation (O=) and the end of its validity, when read */
  organization?: string | null;
  notAfter?: string | null;
}

/** What a stored "found" record did to the domain's artwork. */
export type ArtworkChange = "new" | "unchanged" | "replaced";

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
  /** the domain's BIMI record and its checks, when it has one */
  bimi?: BimiCheck;
  /** the home page's ETag and Last-Modified (the refresh's conditional GET) */
  pageValidators?: { etag?: string; lastModified?: string };
  /** found records: when the domain is due to be checked again (ISO-8601 UTC) */
  refreshAt?: string;
  /**
   * found records: "new" (the domain's first artwork), "unchanged" (a check found the same
   * artwork), "replaced" (a check found other artwork, which replaces the old)
   */
  change?: ArtworkChange;
  /** change "replaced": the sha256 of each variant the replaced artwork had */
  previous?: Partial<Record<Variant, string>>;
  /** variants an operator's pin held when the record was stored (the pin stays served) */
  pinned?: Variant[];
  /** the operator who asked for this record (a takedown), absent for discovery's own */
  by?: string;
}

/**
 * Where discovery results persist: one record per registrable domain. Adapters: ./embedded.ts
 * (SQLite), ./mongo.ts.
 */
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
  /**
   * Found records due to be checked again, soonest first, at most `limit`: `refreshAt` at or
   * before `before`, or (a record stored before refreshAt was recorded) none and `at` at or
   * before `staleBefore`.
   */
  discoveriesDue(before: string, staleBefore: string, limit: number): Promise<DiscoveryRecord[]>;
}
