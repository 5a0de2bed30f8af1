import type {
  DiscoveryRecord,
  DiscoveryStore,
  EnrichmentRecord,
  EnrichmentStore,
} from "../catalog/enrichment-port";
import { newId } from "../platform/ids";
import { log } from "../platform/log";
import type { AuditStore } from "./port";

const AUDITED = { found: "discovery_stored", taken_down: "takedown" } as const;

/**
 * The enrichment and discovery store with an audit event for every discovery record that
 * changes a brand: found artwork stored ("discovery_stored") and a takedown ("takedown"). It
 * sits in front of both adapters, so the service, its operator routes and the admin CLI all
 * leave the trail. An audit write that fails is logged; the record stays stored.
 */
export function auditedDiscoveries(
  store: EnrichmentStore & DiscoveryStore,
  audit: AuditStore,
): EnrichmentStore & DiscoveryStore {
  return {
    all: () => store.all(),
    save: (record: EnrichmentRecord) => store.save(record),
    discoveries: (since?: string) => store.discoveries(since),
    discovery: (domain: string) => store.discovery(domain),
    discoveriesDue: (before: string, staleBefore: string, limit: number) =>
      store.discoveriesDue(before, staleBefore, limit),
    async saveDiscovery(record: DiscoveryRecord) {
      const saved = await store.saveDiscovery(record);
      // a brand's change only (a domain blocked before any brand had it changes none)
      const type =
        saved === record && saved.brandId !== null
          ? AUDITED[saved.status as keyof typeof AUDITED]
          : undefined;
      if (type)
        await audit
          .appendAudit({
            id: newId(),
            brandId: saved.brandId,
            slug: saved.slug,
            type,
            at: saved.at,
            by: saved.status === "taken_down" ? "operator" : "discovery",
            detail: {
              domain: saved.domain,
              variants: Object.keys(saved.variants).join(",") || null,
              pageUrl: saved.pageUrl,
            },
          })
          .catch((err) =>
            log("warn", "audit event not stored", { reason: (err as Error).message }),
          );
      return saved;
    },
  };
}
