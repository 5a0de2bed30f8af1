import type { ColorRole, StoredSvg, Variant } from "../../built-catalog";

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

/** Where enrichment results persist. Adapters: ./embedded.ts (SQLite), ./mongo.ts. */
export interface EnrichmentStore {
  /** the latest record of every brand */
  all(): Promise<EnrichmentRecord[]>;
  /**
   * Store a record. When a record with the same brandId and basis is already stored (another
   * job or instance got there first), that one is kept and returned, so results converge.
   */
  save(record: EnrichmentRecord): Promise<EnrichmentRecord>;
}
