/**
 * The audit trail's one home: how events are made and how values are recorded in them
 * (artwork by its sha256 and provenance, never its markup), and the discovery store that
 * appends an event for every discovery record that changes a brand.
 */

import type { Brand, StoredSvg, Variant } from "../catalog/built-catalog";
import type { DiscoveryRecord, DiscoveryStore } from "../catalog/discovery/store/port";
import { newId } from "../platform/ids";
import { log } from "../platform/log";
import type { AuditEvent, AuditStore, AuditType, AuditValue } from "./store/port";

/** An event of `type` on `brand` (null: a company the catalog does not have), made now. */
export function auditEvent(
  brand: { id: number | null; slug: string | null } | null,
  type: AuditType,
  by: string,
  change: { before?: AuditValue | null; after?: AuditValue | null; detail?: AuditEvent["detail"] },
): AuditEvent {
  return {
    id: newId(),
    brandId: brand?.id ?? null,
    slug: brand?.slug ?? null,
    type,
    at: new Date().toISOString(),
    by,
    before: change.before ?? null,
    after: change.after ?? null,
    detail: change.detail ?? {},
  };
}

/** Variants by their sha256 and source: `{ color: "<sha256> <source>" }`. */
export function variantsValue(
  variants: Partial<Record<Variant, Pick<StoredSvg, "sha256" | "source">>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [v, s] of Object.entries(variants)) if (s) out[v] = `${s.sha256} ${s.source}`;
  return out;
}

/** What a brand serves for a pinnable field: a variant by its sha256 and source, or the value. */
export function servedValue(b: Brand | undefined, field: string): AuditValue | null {
  if (!b) return null;
  if (field.startsWith("artwork:")) {
    const s = b.variants[field.slice("artwork:".length) as Variant];
    return s ? { sha256: s.sha256, source: s.source } : null;
  }
  const value = b[field as keyof Brand] as string | string[] | null | undefined;
  return { value: value ?? null };
}

/** A discovery record's brand-facing state: status, page, and artwork by sha256 and source. */
const discoveryValue = (r: DiscoveryRecord): AuditValue => ({
  status: r.status,
  pageUrl: r.pageUrl,
  variants: variantsValue(r.variants),
  sources: r.assets.map((a) => `${a.variant} ${a.sourceUrl}`),
  ...(r.reason ? { reason: r.reason } : {}),
});

const sameArtwork = (a: DiscoveryRecord, b: DiscoveryRecord) =>
  JSON.stringify(variantsValue(a.variants)) === JSON.stringify(variantsValue(b.variants));

/**
 * The audit type of a stored discovery record against the one it replaced: artwork stored for
 * the first time, different artwork (refreshed), a refused or failed attempt, a takedown; none
 * when nothing a brand shows changed (the same artwork found again, or kept after a failure).
 */
function discoveryChange(saved: DiscoveryRecord, previous: DiscoveryRecord | null) {
  if (saved.status === "taken_down") return "takedown" as const;
  if (saved.status === "found") {
    if (previous?.status !== "found") return "discovery_stored" as const;
    return sameArtwork(previous, saved) ? null : ("discovery_refreshed" as const);
  }
  const again = previous?.status === saved.status && previous.reason === saved.reason;
  if ((saved.status === "refused" || saved.status === "failed") && !again)
    return "discovery_refused" as const;
  return null;
}

/**
 * The enrichment and discovery store with an audit event for every discovery record that
 * changes what a brand shows, or refuses it: artwork stored, refreshed (the record's artwork
 * differs from the one it replaced), an attempt refused or failed, a takedown (by the operator
 * the record names). It sits in front of both adapters, so the service, its operator routes
 * and the admin CLI all leave the trail. An audit write that fails is logged; the record stays
 * stored.
 */
export function auditedDiscoveries(store: DiscoveryStore, audit: AuditStore): DiscoveryStore {
  return {
    discoveries: (since?: string) => store.discoveries(since),
    discovery: (domain: string) => store.discovery(domain),
    discoveriesDue: (before: string, staleBefore: string, limit: number) =>
      store.discoveriesDue(before, staleBefore, limit),
    async saveDiscovery(record: DiscoveryRecord) {
      const previous = await store.discovery(record.domain);
      const saved = await store.saveDiscovery(record);
      // a brand's change only (a domain blocked before any brand had it changes none)
      const type =
        saved === record && saved.brandId !== null ? discoveryChange(saved, previous) : null;
      if (type)
        await audit
          .appendAudit([
            auditEvent(
              { id: saved.brandId, slug: saved.slug },
              type,
              saved.by ?? (type === "takedown" ? "operator" : "discovery"),
              {
                before: previous ? discoveryValue(previous) : null,
                after: discoveryValue(saved),
                detail: { domain: saved.domain },
              },
            ),
          ])
          .catch((err) =>
            log("warn", "audit event not stored", { reason: (err as Error).message }),
          );
      return saved;
    },
  };
}
