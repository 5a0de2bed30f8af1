import { join } from "node:path";
import type { EnrichmentRecord, EnrichmentStore } from "../../catalog/enrichment-port";
import { JsonlLog } from "./jsonl";

/**
 * Embedded enrichment store: records appended to DATA_DIR/enrichment.jsonl (fdatasync'd), the
 * latest per brand kept in memory and replayed over the catalog at start.
 */
export class EmbeddedEnrichmentStore implements EnrichmentStore {
  private log: JsonlLog<EnrichmentRecord>;
  private latest = new Map<number, EnrichmentRecord>();

  constructor(dataDir: string) {
    this.log = new JsonlLog(join(dataDir, "enrichment.jsonl"));
    for (const r of this.log.readAll()) this.latest.set(r.brandId, r);
  }

  async all() {
    return [...this.latest.values()];
  }

  async save(record: EnrichmentRecord) {
    const stored = this.latest.get(record.brandId);
    if (stored && stored.basis === record.basis) return stored;
    this.log.append([record]);
    this.latest.set(record.brandId, record);
    return record;
  }

  close() {
    this.log.close();
  }
}
