import type { Static } from "elysia";
import { log } from "../platform/log";
import { collectGarbage } from "../platform/memory";
import { contrastTextColor } from "./colors";
import { directoryFields, type ServiceResponse } from "./model";
import type { CatalogSource } from "./port";
import type { Brand, BuiltCatalog } from "./types";

export const NOTICE =
  "Brand names, logos and colors are trademarks of their respective owners. Use them only to " +
  "identify the brand, follow its brand guidelines, and do not imply endorsement.";

/** A catalog entry as GET /v1/catalog/{slug} answers it (the ServiceResponse schema). */
export type ServiceView = Static<typeof ServiceResponse>;

/** Whether the brand has at least one stored SVG (directory entries have none). */
export function hasArtwork(b: Pick<Brand, "variants">): boolean {
  for (const _ in b.variants) return true;
  return false;
}

/** Black or white text on the brand color: the stored value, else derived from brandColor. */
export function contrastOf(b: Pick<Brand, "brandColor" | "contrastTextColor">): string | null {
  return b.contrastTextColor ?? (b.brandColor ? contrastTextColor(b.brandColor) : null);
}

/** CSS custom properties, always derived from the same fields the response carries. */
export function cssVars(b: Pick<Brand, "brandColor" | "darkModeColor" | "contrastTextColor">) {
  if (!b.brandColor) return null;
  return {
    "--brand-color": `#${b.brandColor}`,
    "--brand-color-dark": `#${b.darkModeColor ?? b.brandColor}`,
    "--brand-color-contrast": `#${contrastOf(b)}`,
  };
}

export function toServiceView(b: Brand): ServiceView {
  return {
    id: b.id,
    slug: b.slug,
    name: b.name,
    brandColor: b.brandColor,
    darkModeColor: b.darkModeColor,
    svgVariants: null,
    colors: b.colors.length ? b.colors : null,
    _css: cssVars(b),
    _notice: NOTICE,
    ...directoryFields(b),
  };
}

/**
 * Changes laid over every brand the catalog answers (operators' pins, src/reports/pins.ts):
 * `apply` on each read, `strip` on each write of a brand that was read through it.
 */
export interface BrandOverlay {
  /** number of changes in force (none: the catalog's brands are answered as they are) */
  readonly size: number;
  apply(b: Brand): Brand;
  strip(next: Brand, base: Brand | undefined): Brand;
}

/**
 * The catalog held in memory (a few thousand brands): every read is a map lookup, never a
 * network call. Reloads itself when the source's version changes.
 */
export class CatalogService {
  private brands: Brand[] = [];
  private bySlug = new Map<string, Brand>();
  /** serialized views, made on first use (the by-slug route answers with these bytes) */
  private jsonCache = new Map<number, string>();
  private currentVersion: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private listeners: ((updated?: Brand) => void)[] = [];
  private overlay: BrandOverlay | null = null;
  /** every brand with the overlay applied, made on first use after a change */
  private overlaid: Brand[] | null = null;

  constructor(private source: CatalogSource) {}

  get version() {
    return this.currentVersion;
  }
  get size() {
    return this.brands.length;
  }
  get loaded() {
    return this.currentVersion !== null;
  }

  async load(): Promise<void> {
    const built = await this.source.load();
    this.install(built);
    // a directory-size catalog: the parse's garbage (the 56 MB file's text) goes before the
    // domain map and the search index allocate theirs (RSS peak); a frozen catalog was parsed
    // once and is shared (src/catalog/frozen.ts): no parse here, no garbage
    if (this.brands.length >= 5000 && !Object.isFrozen(built)) collectGarbage();
  }

  /** Poll the source every `ms` and reload when its version changed. */
  watch(ms: number) {
    let busy = false; // a reload slower than `ms` is not started again on the next tick
    this.timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        const v = await this.source.version();
        if (v && v !== this.currentVersion) {
          await this.load();
          log("info", "catalog reloaded", { version: v, brands: this.size });
        }
      } catch (err) {
        log("warn", "catalog refresh failed", { reason: (err as Error).message });
      } finally {
        busy = false;
      }
    }, ms);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Call `listener` after every install (no argument) and every update (the new brand). */
  onChange(listener: (updated?: Brand) => void) {
    this.listeners.push(listener);
  }

  private emit(updated?: Brand) {
    for (const listener of this.listeners) {
      try {
        listener(updated);
      } catch (err) {
        log("warn", "catalog change listener failed", { reason: (err as Error).message });
      }
    }
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }

  install(built: BuiltCatalog) {
    const brands = [...built.brands].sort((a, b) => a.id - b.id);
    this.brands = brands;
    this.bySlug = new Map(brands.map((b) => [b.slug, b]));
    // a retired slug answers with the brand it became (never over a live slug)
    for (const b of brands)
      for (const former of b.formerSlugs ?? [])
        if (!this.bySlug.has(former)) this.bySlug.set(former, b);
    this.jsonCache = new Map();
    this.artworkSplit = null;
    this.overlaid = null;
    this.currentVersion = built.version;
    this.emit();
  }

  /** Every brand in id order, as readers see them (the overlay applied). */
  all(): readonly Brand[] {
    if (!this.overlay?.size) return this.brands;
    this.overlaid ??= this.brands.map((b) => (this.overlay as BrandOverlay).apply(b));
    return this.overlaid;
  }

  brand(slug: string): Brand | undefined {
    const b = this.bySlug.get(slug.toLowerCase());
    return b && this.overlay ? this.overlay.apply(b) : b;
  }

  /** Lay `overlay` over every brand read from now on. */
  useOverlay(overlay: BrandOverlay) {
    this.overlay = overlay;
    this.jsonCache = new Map();
    this.overlaid = null;
  }

  /** The overlay of a brand changed: its cached view goes, listeners see it as updated. */
  overlayChanged(id: number) {
    const b = this.brands[this.position(id)];
    if (b?.id !== id) return;
    this.jsonCache.delete(id);
    this.overlaid = null;
    this.emit(this.overlay ? this.overlay.apply(b) : b);
  }

  /** Replace one brand's record in place (enrichment results) and refresh its view. */
  update(next: Brand) {
    const i = this.position(next.id);
    if (this.brands[i]?.id !== next.id) return;
    const brand = this.overlay ? this.overlay.strip(next, this.brands[i]) : next;
    this.brands[i] = brand;
    this.bySlug.set(brand.slug, brand);
    this.jsonCache.delete(brand.id);
    this.artworkSplit = null;
    this.overlaid = null;
    this.emit(this.overlay ? this.overlay.apply(brand) : brand);
  }

  /**
   * Add a brand the built catalog does not have (a discovered brand), after the others in id
   * order; a brand with its id or slug already present is updated instead.
   */
  add(brand: Brand) {
    const i = this.position(brand.id);
    if (this.brands[i]?.id === brand.id) return this.update(brand);
    if (this.bySlug.has(brand.slug)) return;
    this.brands.splice(i, 0, brand);
    this.bySlug.set(brand.slug, brand);
    this.artworkSplit = null;
    this.overlaid = null;
    this.emit(brand);
  }

  /** Where a brand with this id is, or would go, in the id-ordered list (binary search). */
  private position(id: number): number {
    let lo = 0;
    let hi = this.brands.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.brands[mid] as Brand).id < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Remove an added brand (a discovered brand taken down); listeners see a full change. */
  remove(id: number) {
    const i = this.position(id);
    if (this.brands[i]?.id !== id) return;
    const [gone] = this.brands.splice(i, 1);
    if (gone) this.bySlug.delete(gone.slug);
    this.jsonCache.delete(id);
    this.artworkSplit = null;
    this.overlaid = null;
    this.emit();
  }

  view(slug: string): ServiceView | null {
    const b = this.brand(slug);
    return b ? toServiceView(b) : null;
  }

  /** The ServiceResponse of a slug as JSON text, serialized once per brand version. */
  viewJson(slug: string): string | null {
    const b = this.brand(slug);
    return b ? this.entryJson(b) : null;
  }

  /**
   * The ServiceResponse of a brand as JSON text, serialized once per brand version (dropped
   * by update() and install()). The by-slug route, list pages, batch and search responses are
   * assembled from these strings.
   */
  entryJson(brand: Brand): string {
    if (this.overlay) brand = this.overlay.apply(brand);
    let json = this.jsonCache.get(brand.id);
    if (json === undefined) {
      json = JSON.stringify(this.viewOf(brand));
      this.jsonCache.set(brand.id, json);
    }
    return json;
  }

  /** Made on each call (cheap), not kept per brand: 20k prebuilt views held ~18 MB of RSS. */
  viewOf(brand: Brand): ServiceView {
    return toServiceView(this.overlay ? this.overlay.apply(brand) : brand);
  }

  /**
   * One page in id order (stable across rebuilds: new brands get higher ids). `artwork` true
   * keeps brands with at least one stored SVG, false the directory entries without; undefined
   * lists every brand.
   */
  list(limit: number, offset: number, artwork?: boolean) {
    const pool = artwork === undefined ? this.brands : this.byArtwork(artwork);
    const items = pool.slice(offset, offset + limit).map((b) => this.viewOf(b));
    return { items, total: pool.length, limit, offset };
  }

  private artworkSplit: { with: Brand[]; without: Brand[] } | null = null;
  private byArtwork(artwork: boolean): Brand[] {
    if (!this.artworkSplit) {
      const split = { with: [] as Brand[], without: [] as Brand[] };
      for (const b of this.brands) (hasArtwork(b) ? split.with : split.without).push(b);
      this.artworkSplit = split;
    }
    return artwork ? this.artworkSplit.with : this.artworkSplit.without;
  }

  /** list() as JSON text, assembled from pre-serialized entries (same content and key order). */
  listJson(limit: number, offset: number, artwork?: boolean): string {
    const pool = artwork === undefined ? this.brands : this.byArtwork(artwork);
    const items = pool.slice(offset, offset + limit).map((b) => this.entryJson(b));
    return `{"items":[${items.join(",")}],"total":${pool.length},"limit":${limit},"offset":${offset}}`;
  }

  /** batch() as JSON text, assembled from pre-serialized entries (same content and key order). */
  batchJson(uniqueSlugs: string[]): string {
    // an object only for its key order (integer-like keys first, as in batch()'s object)
    const json: Record<string, string> = Object.create(null);
    const notFound: string[] = [];
    for (const slug of uniqueSlugs) {
      const b = this.brand(slug);
      json[slug] = b ? this.entryJson(b) : "null";
      if (!b) notFound.push(slug);
    }
    const results = Object.keys(json).map((slug) => `${JSON.stringify(slug)}:${json[slug]}`);
    const found = uniqueSlugs.length - notFound.length;
    return `{"results":{${results.join(",")}},"found":${found},"notFound":${JSON.stringify(notFound)}}`;
  }

  /** Resolve unique slugs; unknown ones map to null and are listed in notFound. */
  batch(uniqueSlugs: string[]) {
    // no prototype: a slug such as "__proto__" is a key like any other
    const results: Record<string, ServiceView | null> = Object.create(null);
    const notFound: string[] = [];
    let found = 0;
    for (const slug of uniqueSlugs) {
      const v = this.view(slug);
      results[slug] = v;
      if (v) found++;
      else notFound.push(slug);
    }
    return { results, found, notFound };
  }
}
