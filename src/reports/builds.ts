/**
 * What each catalog build changed, brand by brand, in the audit trail; and the pins of the
 * brands a build retired, moved to the brand the retired slug now answers with (its redirect,
 * `formerSlugs`) or reported in the review queue.
 *
 * The store keeps the built brands as the audit last recorded them (slug, name, each variant's
 * sha256 and source) and the version they are of. When an instance serves another version,
 * the one instance that moves the recorded version first (claimCatalogState) compares, appends
 * a `catalog_changed` event per brand added, changed or retired, handles the retired brands'
 * pins, and records the new state. The first version an empty store sees is recorded as it is
 * (the same rows by whichever instances get there, then claimed once).
 */
import { DISCOVERED_ID_BASE } from "../catalog/discovery/pipeline";
import type { CatalogService } from "../catalog/service";
import { log } from "../platform/log";
import { auditEvent, variantsValue } from "./audit";
import type {
  AuditEvent,
  AuditValue,
  BuiltBrandState,
  CorrectionsStore,
  Pin,
  Report,
} from "./store/port";

const stateValue = (s: BuiltBrandState): AuditValue => ({
  slug: s.slug,
  name: s.name,
  variants: variantsValue(s.variants),
});

/** The fields of a built brand that differ between two states. */
function changedFields(a: BuiltBrandState, b: BuiltBrandState): string[] {
  const out: string[] = [];
  if (a.slug !== b.slug) out.push("slug");
  if (a.name !== b.name) out.push("name");
  if (JSON.stringify(variantsValue(a.variants)) !== JSON.stringify(variantsValue(b.variants)))
    out.push("variants");
  return out;
}

export interface BuildAuditDeps {
  store: CorrectionsStore;
  catalog: CatalogService;
  /** re-read the pins in force (after moving some) */
  refreshPins(): Promise<void>;
  /** the pins in force by brand */
  pinsOf(brandId: number): Pin[];
  /** every pin in force */
  pins(): Pin[];
  /** put a pin_orphaned report of the brand in the review queue, filed by the service itself */
  reportOrphan(brand: { id: number; slug: string }, note: string): Promise<Report>;
}

/** A catalog version and its built brands, as served before an in-place reload. */
export interface ServedBuild {
  version: string;
  brands: BuiltBrandState[];
}

/**
 * Record the catalog's current version: nothing when it is the recorded one or another
 * instance records it; else the build's per-brand changes and the retired brands' pins.
 * `first`: the version served before an in-place reload, for a store that recorded none yet
 * (its brands read from the outgoing catalog before it closed), so the reload's changes are
 * told against it.
 */
export async function recordBuild(deps: BuildAuditDeps, first?: ServedBuild): Promise<void> {
  const { store, catalog } = deps;
  const version = catalog.version;
  if (!version) return;
  let previous = await store.catalogStateVersion();
  if (previous === null && first && first.version !== version) {
    await recordFirst(deps, first);
    previous = await store.catalogStateVersion();
  }
  if (previous === version) return;
  const now = catalog.database.builtBrands();
  if (previous === null) {
    await recordFirst(deps, { version, brands: now });
    return;
  }
  if (!(await store.claimCatalogState(previous, version))) return;
  const before = new Map((await store.catalogState()).map((s) => [s.id, s]));
  const events: AuditEvent[] = [];
  const changed: BuiltBrandState[] = [];
  const detail = { version, previous };
  for (const s of now) {
    const old = before.get(s.id);
    before.delete(s.id);
    const fields = old ? changedFields(old, s) : [];
    if (old && !fields.length) continue;
    changed.push(s);
    events.push(
      auditEvent(s, "catalog_changed", "catalog", {
        before: old ? stateValue(old) : null,
        after: stateValue(s),
        detail: { ...detail, change: old ? "changed" : "added", fields: fields.join(",") || null },
      }),
    );
  }
  // what is left was retired by this build
  const retired = [...before.values()];
  for (const s of retired) {
    const target = redirectOf(catalog, s);
    events.push(
      auditEvent(s, "catalog_changed", "catalog", {
        before: stateValue(s),
        detail: { ...detail, change: "retired", redirect: target?.slug ?? null },
      }),
    );
  }
  await store.appendAudit(events);
  await movePins(deps, retired);
  await store.putCatalogState(
    changed,
    retired.map((s) => s.id),
  );
  log("info", "catalog build recorded", {
    version,
    previous,
    changed: changed.length,
    retired: retired.length,
  });
}

/**
 * A store's first version, recorded as it is (the same rows by whichever instances get there,
 * then claimed once); pins an earlier build left on brands it retired, before the store recorded
 * builds, move as a retirement's would.
 */
async function recordFirst(deps: BuildAuditDeps, build: ServedBuild) {
  const { store } = deps;
  // recorded before it is claimed: a write that fails (a full disk) leaves nothing claimed
  const ids = new Set(build.brands.map((s) => s.id));
  const stale = (await store.catalogState()).filter((s) => !ids.has(s.id)).map((s) => s.id);
  await store.putCatalogState(build.brands, stale);
  if (!(await store.claimCatalogState(null, build.version))) return;
  await deps.refreshPins();
  const left = new Map<number, { id: number; slug: string }>();
  for (const p of deps.pins())
    if (!ids.has(p.brandId) && p.brandId < DISCOVERED_ID_BASE)
      left.set(p.brandId, { id: p.brandId, slug: p.slug });
  await movePins(deps, [...left.values()]);
}

/** The brand a retired brand's slug answers with now (a redirect), if any. */
function redirectOf(catalog: CatalogService, s: { id: number; slug: string }) {
  const b = catalog.brand(s.slug);
  return b && b.id !== s.id ? b : undefined;
}

/**
 * The pins of retired brands: each moved to the brand the retired slug redirects to, unless
 * that brand has its own pin on the field; a pin that cannot move is reported in the review
 * queue (kind pin_orphaned) and stays stored under the retired brand until an operator
 * removes it.
 */
async function movePins(deps: BuildAuditDeps, retired: { id: number; slug: string }[]) {
  await deps.refreshPins();
  const events: AuditEvent[] = [];
  let moved = false;
  for (const s of retired) {
    const pins = deps.pinsOf(s.id);
    if (!pins.length) continue;
    const target = redirectOf(deps.catalog, s);
    for (const pin of pins) {
      const outcome = target
        ? await deps.store.movePin(pin, {
            ...pin,
            brandId: target.id,
            slug: target.slug,
            why: [pin.why, `moved from ${s.slug}, retired by a catalog build`]
              .filter(Boolean)
              .join("; "),
          })
        : "orphaned";
      if (outcome === "gone") continue;
      const value = { field: pin.field, by: pin.by, at: pin.at };
      if (outcome === "moved" && target) {
        moved = true;
        const detail = { field: pin.field, from: s.slug, to: target.slug };
        events.push(
          auditEvent(s, "pin_moved", "system", { before: value, detail }),
          auditEvent(target, "pin_moved", "system", { after: value, detail }),
        );
        continue;
      }
      const why = target
        ? `${target.slug}, which ${s.slug} now redirects to, has its own pin on ${pin.field}`
        : `${s.slug} was retired without a redirect`;
      const report = await deps.reportOrphan(
        s,
        `The pin on ${pin.field} of ${s.slug} could not move: ${why}. Pin it again where it belongs, then remove it (DELETE /admin/brands/${s.slug}/artwork/... or PATCH with null).`,
      );
      events.push(
        auditEvent(s, "pin_orphaned", "system", {
          before: value,
          detail: { field: pin.field, redirect: target?.slug ?? null, report: report.id, why },
        }),
      );
      log("warn", "pin left without its brand", { slug: s.slug, field: pin.field, why });
    }
  }
  await deps.store.appendAudit(events);
  if (moved) await deps.refreshPins();
}
