/** Where the running service gets its catalog from (the built file, or MongoDB). */
export interface CatalogSource {
  /**
   * The path of a catalog database file (src/catalog/store/schema.ts) holding the current
   * version, written first where the source keeps its catalog elsewhere.
   */
  file(): Promise<string>;
  /** the version currently stored (cheap; polled to reload when it changes) */
  version(): Promise<string | null>;
}
