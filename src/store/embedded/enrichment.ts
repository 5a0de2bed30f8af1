import { join } from "node:path";
import type {
  DiscoveryRecord,
  DiscoveryStore,
  EnrichmentRecord,
  EnrichmentStore,
} from "../../catalog/enrichment-port";
import { JsonlLog } from "./jsonl";

/**
 * Embedded enrichment store: records appended to DATA_DIR/enrichment.jsonl (fdatasync'd on the
 * thread pool, so a burst of background jobs never holds the request thread), the
 * latest per brand kept in memory and replayed over the catalog at start. Discovery records go
 * to DATA_DIR/discoveries.jsonl the same way (latest per domain); lines another process (the
 * admin CLI) appended are read in when polled (`discoveries(since)`).
 */
export class EmbeddedEnrichmentStore implements EnrichmentStore, DiscoveryStore {
  private log: JsonlLog<EnrichmentRecord>;
  private latest = new Map<number, EnrichmentRecord>();
  private found: JsonlLog<DiscoveryRecord>;
  private byDomain = new Map<string, DiscoveryRecord>();

  constructor(dataDir: string) {
    this.log = new JsonlLog(join(dataDir, "enrichment.jsonl"));
    for (const r of this.log.readAll()) this.latest.set(r.brandId, r);
    this.found = new JsonlLog(join(dataDir, "discoveries.jsonl"));
    for (const r of this.found.readAll()) this.keep(r);
  }

  async all() {
    return [...this.latest.values()];
  }

  async save(record: EnrichmentRecord) {
    const stored = this.latest.get(record.brandId);
    if (stored && stored.basis === record.basis) return stored;
    this.latest.set(record.brandId, record);
    await this.log.appendAsync([record]);
    return record;
  }

  /** the latest record per domain; a taken-down record is never replaced */
  private keep(r: DiscoveryRecord): boolean {
    if (this.byDomain.get(r.domain)?.status === "taken_down") return false;
    this.byDomain.set(r.domain, r);
    return true;
  }

  async discoveries(since?: string) {
    const fresh = this.found.readNew().filter((r) => this.keep(r));
    if (since === undefined) return [...this.byDomain.values()];
    return [...this.byDomain.values()].filter((r) => r.at > since || fresh.includes(r));
  }

  async discovery(domain: string) {
    return this.byDomain.get(domain) ?? null;
  }

  /**
   * A takedown another process appended and this one has not read yet is still final: on
   * replay, keep() never lets a later line replace a taken-down record.
   */
  async saveDiscovery(record: DiscoveryRecord) {
    const stored = this.byDomain.get(record.domain);
    if (stored?.status === "taken_down") return stored;
    this.byDomain.set(record.domain, record);
    await this.found.appendAsync([record]);
    return record;
  }

  /** Waits for appends in flight, then closes both files. */
  async close() {
    await Promise.all([this.log.closeAsync(), this.found.closeAsync()]);
  }
}
