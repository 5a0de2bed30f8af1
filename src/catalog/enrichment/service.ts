/**
 * Background enrichment: fills what can be derived for a brand but the catalog build left
 * out, after the request that asked for the brand has been answered.
 *
 * Derived per brand (never replacing the brand's own data):
 *  - `dark`  variant: the mono mark filled with brandColor when that reaches 3:1 against
 *            #121212, else white, for dark backgrounds (the variant rules of docs/assets.md;
 *            the build gives catalog brands both already);
 *  - `light` variant: the mono mark filled with brandColor when that reaches 3:1 against white,
 *            else black, for light backgrounds;
 *  - color roles brand / dark-mode / contrast-text and the darkModeColor and contrastTextColor
 *    fields when missing;
 *  - verifiedAt: the time every stored SVG matched its recorded sha256 and passed the
 *    sanitizer again (left null when a check fails; the failure is logged), and none of the
 *    artwork was read over plain http (left null: such artwork is never verified).
 *
 * Jobs are deduplicated per brand (one queued or running at a time, none once the brand's
 * record is applied), run at most `concurrency` at a time, are idempotent (same inputs give
 * the same variants; the store keeps the first record per input hash), and never throw into
 * the request that started them. Results go to the EnrichmentStore and into the in-memory
 * catalog (CatalogService.update), so later requests see them.
 */
import { createHash } from "node:crypto";
import type { CustomPlugin } from "svgo";
import { optimize } from "svgo";
import { log } from "../../platform/log";
import { repeat } from "../../platform/repeat";
import type { Brand, ColorRole, StoredSvg, Variant } from "../built-catalog";
import { contrastRatio, DARK_SURFACE, deriveBrandColors } from "../colors";
import type { DiscoveryRecord, DiscoveryStore } from "../discovery/store/port";
import { readOverHttp } from "../provenance";
import { sanitizeSvg } from "../sanitize";
import type { EnrichmentRecord, EnrichmentStore } from "./store/port";

export const DERIVED_SOURCE = "derived:mono";
const isDerived = (svg: StoredSvg | undefined) => svg?.source.startsWith("derived") ?? false;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The catalog as enrichment needs it (CatalogService implements it). */
export interface EnrichableCatalog {
  brand(slug: string): Brand | undefined;
  update(brand: Brand): void;
  /** a brand the catalog does not have yet (discovered), and its removal (taken down) */
  add(brand: Brand): void;
  remove(id: number): void;
  onChange(listener: (updated?: Brand) => void): void;
}

/** Source tag of discovered artwork and colours ("web:svg", "web:raster:WxH"). */
export const WEB_SOURCE = "web";
/** Source tag of a catalog brand whose brandColor came from its website. */
const WEB_COLOR = "web:color";
const isWeb = (svg: StoredSvg | undefined) => svg?.source.startsWith(WEB_SOURCE) ?? false;

/**
 * The brand with a found discovery record applied: the record's artwork as the brand's
 * variants (discovery only runs for brands without artwork), its colour where the brand has
 * none. A record that created its brand gives the whole entry. Null when it cannot apply.
 */
export function withDiscovery(b: Brand | undefined, r: DiscoveryRecord): Brand | null {
  if (r.status !== "found" || r.brandId === null || !r.slug) return null;
  if (!b) {
    if (!r.created || !r.name) return null;
    return {
      id: r.brandId,
      slug: r.slug,
      name: r.name,
      brandColor: r.brandColor,
      darkModeColor: null,
      contrastTextColor: null,
      colors: [],
      aliases: [],
      domains: [r.domain],
      sourceUrl: r.pageUrl,
      guidelinesUrl: null,
      sources: [WEB_SOURCE],
      variants: r.variants,
      verifiedAt: null,
      ...(r.pageUrl ? { links: { website: r.pageUrl } } : {}),
    };
  }
  if (b.id !== r.brandId) return null;
  // an operator's pin (source "pin", laid over the brand: src/reports/pins.ts) is not the
  // catalog's artwork: the record still applies under it
  const own = Object.entries(b.variants).filter(
    ([, v]) => !isDerived(v) && !isWeb(v) && !v.source.startsWith("pin"),
  );
  if (own.length) return null; // the catalog has artwork of its own now
  const tags = b.brandColor || !r.brandColor ? [WEB_SOURCE] : [WEB_SOURCE, WEB_COLOR];
  return {
    ...b,
    // new artwork: checked again before the brand is verified
    verifiedAt: null,
    brandColor: b.brandColor ?? r.brandColor,
    sources: [...b.sources.filter((s) => !tags.includes(s)), ...tags],
    variants: r.variants,
  };
}

/** A catalog brand as it was before discovery applied to it (a takedown). */
export function withoutDiscovery(b: Brand): Brand {
  const colorFromWeb = b.sources.includes(WEB_COLOR);
  return {
    ...b,
    sources: b.sources.filter((s) => s !== WEB_SOURCE && s !== WEB_COLOR),
    variants: {},
    ...(colorFromWeb
      ? { brandColor: null, darkModeColor: null, contrastTextColor: null, colors: [] }
      : {}),
  };
}

/** The brand's variants without the ones an enrichment derived. */
function ownVariants(b: Brand): Partial<Record<Variant, StoredSvg>> {
  return Object.fromEntries(Object.entries(b.variants).filter(([, v]) => !isDerived(v)));
}

/** Hash of everything a record is derived from; a record applies only to the same inputs. */
export function enrichmentBasis(b: Brand): string {
  const own = Object.entries(ownVariants(b))
    .map(([name, v]) => `${name}:${v.sha256}`)
    .sort();
  return sha256(
    JSON.stringify([
      b.slug,
      b.brandColor,
      b.darkModeColor,
      b.contrastTextColor,
      b.colors,
      b.verifiedAt,
      own,
      // artwork read over plain http is never verified, the same artwork over https is (only
      // added when true: every other brand keeps the basis its stored record has)
      ...(readOverHttp(b) ? ["read over http"] : []),
    ]),
  );
}

const COLOR_ROLES = ["brand", "dark-mode", "contrast-text"] as const;

/** True when nothing is left to derive for the brand. */
export function isEnriched(b: Brand): boolean {
  const own = ownVariants(b);
  if (own.mono && (!b.variants.dark || !b.variants.light)) return false;
  if (b.brandColor) {
    if (!b.darkModeColor || !b.contrastTextColor) return false;
    if (!COLOR_ROLES.every((role) => b.colors.some((c) => c.role === role))) return false;
  }
  return b.verifiedAt !== null;
}

const PAINT_NONE = /^(none|transparent)$/i;
const recolorPlugin = (hex: string): CustomPlugin => ({
  name: "recolorMono",
  fn: () => ({
    element: {
      enter(node, parent) {
        if (parent.type === "root" && node.name === "svg") node.attributes.fill = `#${hex}`;
        for (const attr of ["fill", "stroke"]) {
          const v = node.attributes[attr];
          if (v === undefined || PAINT_NONE.test(v) || v.includes("url(")) continue;
          node.attributes[attr] = `#${hex}`;
        }
        const style = node.attributes.style;
        if (style)
          node.attributes.style = style.replace(
            /(^|;)\s*(fill|stroke)\s*:\s*(?!none|transparent|url\()[^;]+/gi,
            `$1$2:#${hex}`,
          );
      },
    },
  }),
});

/** The mono mark in one color: fill set on the root and on every painted element, sanitized. */
export function recolorMono(svg: string, hex: string): StoredSvg {
  const out = sanitizeSvg(optimize(svg, { plugins: [recolorPlugin(hex)] }).data);
  return { svg: out, sha256: sha256(out), source: DERIVED_SOURCE };
}

/** Every stored SVG matches its sha256 and still passes the sanitizer. */
function verify(b: Brand): string | null {
  for (const [name, v] of Object.entries(ownVariants(b))) {
    if (sha256(v.svg) !== v.sha256) return `${name}: sha256 mismatch`;
    try {
      sanitizeSvg(v.svg);
    } catch (err) {
      return `${name}: ${(err as Error).message}`;
    }
  }
  return null;
}

/** What one job derives for a brand (pure apart from the clock). */
export function deriveEnrichment(b: Brand, now = new Date()): EnrichmentRecord {
  const own = ownVariants(b);
  const derived = b.brandColor ? deriveBrandColors(b.brandColor, "derived") : null;
  const darkModeColor = b.darkModeColor ?? derived?.darkModeColor ?? null;
  const contrastTextColor = b.contrastTextColor ?? derived?.contrastTextColor ?? null;
  const colors: ColorRole[] = [...b.colors];
  if (b.brandColor) {
    const want: Record<(typeof COLOR_ROLES)[number], [string | null, string]> = {
      brand: [b.brandColor, b.sources[0] ?? "derived"],
      "dark-mode": [darkModeColor, "derived"],
      "contrast-text": [contrastTextColor, "derived"],
    };
    for (const role of COLOR_ROLES) {
      const [hex, source] = want[role];
      if (hex && !colors.some((c) => c.role === role)) colors.push({ role, hex, source });
    }
  }
  const variants: EnrichmentRecord["variants"] = {};
  if (own.mono) {
    if (!own.dark) {
      // the variant rules (docs/assets.md): the exact brand colour where it reaches 3:1 on the
      // dark surface, else plain white; a brand colour is never lightened
      const onDark = b.brandColor && contrastRatio(b.brandColor, DARK_SURFACE) >= 3;
      variants.dark = recolorMono(own.mono.svg, onDark ? (b.brandColor as string) : "ffffff");
    }
    if (!own.light) {
      const onWhite = b.brandColor && contrastRatio(b.brandColor, "ffffff") >= 3;
      variants.light = recolorMono(own.mono.svg, onWhite ? (b.brandColor as string) : "000000");
    }
  }
  const problem = verify(b);
  if (problem) log("warn", "brand failed verification", { slug: b.slug, problem });
  return {
    brandId: b.id,
    slug: b.slug,
    basis: enrichmentBasis(b),
    at: now.toISOString(),
    verifiedAt: b.verifiedAt ?? (problem || readOverHttp(b) ? null : now.toISOString()),
    darkModeColor,
    contrastTextColor,
    colors,
    variants,
  };
}

/** The brand with a record applied (its own data wins), or null when the record is stale. */
export function applyEnrichment(b: Brand, r: EnrichmentRecord): Brand | null {
  if (r.brandId !== b.id || r.basis !== enrichmentBasis(b)) return null;
  return {
    ...b,
    darkModeColor: b.darkModeColor ?? r.darkModeColor,
    contrastTextColor: b.contrastTextColor ?? r.contrastTextColor,
    colors: r.colors,
    verifiedAt: b.verifiedAt ?? r.verifiedAt,
    variants: { ...r.variants, ...ownVariants(b) },
  };
}

/** After a failed job (store down), the brand is not retried for this long. */
const RETRY_AFTER_MS = 60_000;

export class EnrichmentService {
  private records = new Map<number, EnrichmentRecord>();
  /** found and taken-down discovery records by domain (see useDiscoveries) */
  private discovered = new Map<string, DiscoveryRecord>();
  private discoveries: DiscoveryStore | null = null;
  private lastDiscoveryAt = "";
  private discoveryTimer: ReturnType<typeof setInterval> | null = null;
  /** brands whose record is applied to the current catalog (cleared on reload) */
  private applied = new Set<number>();
  private pending = new Set<number>();
  private queue: { id: number; slug: string }[] = [];
  private running = 0;
  private failedAt = new Map<number, number>();
  private waiters: (() => void)[] = [];
  private scheduled = false;
  private closed = false;

  /** where deriveEnrichment runs: in a background Worker when set (see useDeriver) */
  private derive: (b: Brand) => Promise<EnrichmentRecord> = async (b) => deriveEnrichment(b);

  constructor(
    private store: EnrichmentStore,
    private catalog: EnrichableCatalog,
    private concurrency = 2,
  ) {}

  /** Run the svgo work of jobs elsewhere (the artwork Worker), off the request thread. */
  useDeriver(derive: (b: Brand) => Promise<EnrichmentRecord>) {
    this.derive = derive;
  }

  /** Replay discovery records too (call before start). */
  useDiscoveries(store: DiscoveryStore) {
    this.discoveries = store;
  }

  /** Load stored records, apply them, and re-apply them whenever the catalog reloads. */
  async start() {
    for (const r of await this.store.all()) this.records.set(r.brandId, r);
    if (this.discoveries) for (const r of await this.discoveries.discoveries()) this.keep(r);
    this.replay();
    this.catalog.onChange((updated) => {
      if (!updated) this.replay();
    });
  }

  /** Number of jobs queued or running. */
  get backlog() {
    return this.pending.size;
  }

  /** Would a request for this brand start a job? */
  needs(b: Brand): boolean {
    if (this.closed || this.applied.has(b.id) || this.pending.has(b.id)) return false;
    const failed = this.failedAt.get(b.id);
    if (failed !== undefined && Date.now() - failed < RETRY_AFTER_MS) return false;
    return !isEnriched(b);
  }

  /** Queue a job for the brand when it needs one. Never throws; returns whether it queued. */
  request(b: Brand): boolean {
    try {
      if (!this.needs(b)) return false;
      this.pending.add(b.id);
      this.queue.push({ id: b.id, slug: b.slug });
      this.schedule();
      return true;
    } catch (err) {
      log("warn", "enrichment request failed", { slug: b.slug, error: String(err) });
      return false;
    }
  }

  /** Resolves once no job is queued or running (tests, shutdown). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stop taking jobs and wait for the running ones. */
  async close() {
    this.closed = true;
    if (this.discoveryTimer) clearInterval(this.discoveryTimer);
    await this.idle();
  }

  private keep(r: DiscoveryRecord) {
    if (r.at > this.lastDiscoveryAt) this.lastDiscoveryAt = r.at;
    if (r.status === "found" || r.status === "taken_down") this.discovered.set(r.domain, r);
  }

  /** The discovery record in force for a domain (found or taken down), if any. */
  discoveryOf(domain: string): DiscoveryRecord | undefined {
    return this.discovered.get(domain);
  }

  /**
   * Apply a discovery record to the running catalog: found artwork is added (a new brand, or
   * the variants of an existing one, then enriched like any brand); a takedown removes a
   * discovered brand or gives an existing one back its artwork-less self.
   */
  applyDiscovery(r: DiscoveryRecord) {
    const previous = this.discovered.get(r.domain);
    this.keep(r);
    if (r.status === "taken_down") {
      const target = previous ?? r;
      if (target.brandId === null) return;
      if (target.created) this.catalog.remove(target.brandId);
      else {
        const current = target.slug ? this.catalog.brand(target.slug) : undefined;
        if (current && current.id === target.brandId)
          this.catalog.update(withoutDiscovery(current));
      }
      this.applied.delete(target.brandId);
      return;
    }
    const b = this.applyFound(r);
    if (!b) return;
    // new artwork: derive its dark/light variants and check it, even if the brand was done
    this.applied.delete(b.id);
    this.failedAt.delete(b.id);
    this.request(b);
  }

  private applyFound(r: DiscoveryRecord): Brand | null {
    if (r.status !== "found" || !r.slug) return null;
    const current = this.catalog.brand(r.slug);
    const next = withDiscovery(current, r);
    if (!next) return null;
    if (current) this.catalog.update(next);
    else this.catalog.add(next);
    return this.catalog.brand(r.slug) ?? null;
  }

  /** Apply the discovery records stored since the last read (by other instances, the CLI). */
  async pollDiscoveries() {
    if (!this.discoveries) return;
    for (const r of await this.discoveries.discoveries(this.lastDiscoveryAt)) {
      const known = this.discovered.get(r.domain);
      if (known && known.at === r.at && known.status === r.status) continue;
      this.applyDiscovery(r);
    }
  }

  /** Poll the store for discovery records every `ms`. */
  watchDiscoveries(ms: number) {
    if (!this.discoveries || this.discoveryTimer) return;
    this.discoveryTimer = repeat(ms, () => this.pollDiscoveries(), "discovery poll failed");
  }

  private replay() {
    this.applied.clear();
    for (const r of this.discovered.values()) this.applyFound(r);
    for (const r of this.records.values()) {
      const b = this.catalog.brand(r.slug);
      const next = b && applyEnrichment(b, r);
      if (!next) continue;
      this.catalog.update(next);
      this.applied.add(r.brandId);
    }
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    // after the current request has been answered
    setTimeout(() => {
      this.scheduled = false;
      this.pump();
    }, 0);
  }

  private pump() {
    while (this.running < this.concurrency && this.queue.length) {
      const job = this.queue.shift() as { id: number; slug: string };
      this.running++;
      void this.run(job.slug).finally(() => {
        this.pending.delete(job.id);
        this.running--;
        this.pump();
        if (this.pending.size === 0 && !this.scheduled) {
          for (const w of this.waiters.splice(0)) w();
        }
      });
    }
  }

  private async run(slug: string) {
    // a job is CPU work (svgo): yield first so waiting requests go ahead of it
    await new Promise((r) => setTimeout(r, 0));
    let b = this.catalog.brand(slug);
    try {
      while (b && !isEnriched(b)) {
        const saved = await this.store.save(await this.derive(b));
        this.records.set(saved.brandId, saved);
        this.failedAt.delete(b.id);
        const current = this.catalog.brand(slug);
        const next = current && applyEnrichment(current, saved);
        if (next) {
          this.catalog.update(next);
          this.applied.add(next.id);
          return;
        }
        // the brand changed while it was derived (discovered artwork arrived, and its request
        // found this job pending): derive again from the brand as it is now
        if (current === b) return;
        b = current;
      }
    } catch (err) {
      if (b) this.failedAt.set(b.id, Date.now());
      log("warn", "enrichment job failed", { slug, error: String(err) });
    }
  }
}
