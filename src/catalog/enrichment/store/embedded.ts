import type { Database } from "../../../store/embedded/db";
import type { EnrichmentRecord, EnrichmentStore } from "./port";

/**
 * Embedded enrichment store on the shared SQLite database: `enrichment`, the latest record per
 * brand, one JSON row each.
 */
export class EmbeddedEnrichmentStore implements EnrichmentStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS enrichment (
        brand_id INTEGER PRIMARY KEY,
        basis TEXT NOT NULL,
        record TEXT NOT NULL
      );
    `);
  }

  async all() {
    return this.db
      .all<{ record: string }>("SELECT record FROM enrichment ORDER BY brand_id")
      .map((r) => JSON.parse(r.record) as EnrichmentRecord);
  }

  async save(record: EnrichmentRecord) {
    return this.saveSync(record, false);
  }

  /** `keepAny`: a stored record of the brand is kept whatever its basis (an idempotent import) */
  saveSync(record: EnrichmentRecord, keepAny: boolean): EnrichmentRecord {
    return this.db.tx(() => {
      const stored = this.db.get<{ basis: string; record: string }>(
        "SELECT basis, record FROM enrichment WHERE brand_id = ?",
        record.brandId,
      );
      if (stored && (keepAny || stored.basis === record.basis))
        return JSON.parse(stored.record) as EnrichmentRecord;
      this.db.run(
        "INSERT OR REPLACE INTO enrichment (brand_id, basis, record) VALUES (?, ?, ?)",
        record.brandId,
        record.basis,
        JSON.stringify(record),
      );
      return record;
    }, true);
  }
}
