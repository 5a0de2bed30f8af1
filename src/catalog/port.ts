import type { BuiltCatalog } from "./types";

/** Where the running service gets its catalog from (the file build, or MongoDB). */
export interface CatalogSource {
  load(): Promise<BuiltCatalog>;
  /** the version currently stored (cheap; polled to refresh the in-memory copy) */
  version(): Promise<string | null>;
}
