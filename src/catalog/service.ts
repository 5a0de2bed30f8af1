import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Static } from "elysia";
import { Lru } from "../platform/cache";
import { log } from "../platform/log";
import { repeat } from "../platform/repeat";
import { type Brand, type BuiltCatalog, VARIANTS } from "./built-catalog";
import { contrastTextColor } from "./colors";
import { directoryFields, type ServiceResponse } from "./model";
import { provenances } from "./provenance";
import { CatalogDb } from "./store/catalog-db";
import type { CatalogSource } from "./store/port";
import { writeCatalogFileSync } from "./store/schema";

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
    provenance: provenances(b, VARIANTS),
    _css: cssVars(b),
    _notice: NOTICE,
    ...directoryFields(b),
  };
}

/** Most characters of brand records (JSON and SVG markup) the brand cache holds. */
const BRAND_CACHE_CHARS = 24 * 1024 * 1024;
/** Most characters of serialized views the view cache holds. */
const VIEW_CACHE_CHARS = 8 * 1024 * 1024;

/** The temp dirs install() wrote, removed when replaced, closed, or at the latest at exit. */
const installedDirs = new Set<string>();
function removeInstalled(dir: string) {
  rmSync(dir, { recursive: true, force: true });
  installedDirs.delete(dir);
}
process.once?.("exit", () => {
  for (const dir of installedDirs) rmSync(dir, { recursive: true, force: true });
});

function brandChars(b: Brand): number {
  let n = 1000;
  for (const v of Object.values(b.variants)) n += v?.svg.length ?? 0;
  return n;
}

/**
 * The catalog in its SQLite database (src/catalog/store/): the built file read-only, the
 * brands added or changed at run time in a writable overlay. Brands and their serialized views
 * are read through bounded LRU caches, so memory does not grow with the catalog. Reloads itself
 * when the source's version changes: the new file is opened and checked, then swapped in.
 */
/**
 * Changes laid over every brand the catalog answers (operators' pins, src/reports/pins.ts):
 * `apply` on each read, `strip` on each write of a brand that was read through it. The
 * database keeps the catalog's own brand; the overlay is never written into it.
 */
export interface BrandOverlay {
  /** number of changes in force (none: the catalog's brands are answered as they are) */
  readonly size: number;
  apply(b: Brand): Brand;
  strip(next: Brand, base: Brand | undefined): Brand;
  /** ids of the brands it changes (search reads their pinned names from here) */
  pinnedIds(): Iterable<number>;
  /** the slug an exact host is pinned to, if any */
  hostSlug(host: string): string | undefined;
}

export class CatalogService {
  private db: CatalogDb | null = null;
  private brands = new Lru<number, Brand>(200_000, BRAND_CACHE_CHARS, brandChars);
  /** serialized views (the by-slug route answers with these bytes) */
  private jsonCache = new Lru<number, string>(200_000, VIEW_CACHE_CHARS, (s) => s.length);
  /** slug -> brand id, for the slugs asked for (only found ones: a later add needs no clearing) */
  private slugIds = new Lru<string, number>(100_000);
  private timer: ReturnType<typeof setInterval> | null = null;
  private listeners: ((updated?: Brand) => void)[] = [];
  private swapListeners: ((outgoing: CatalogDb) => void)[] = [];
  /** the temp file install() wrote, removed when replaced */
  private installed: string | null = null;
  private overlay: BrandOverlay | null = null;

  constructor(private source: CatalogSource) {}

  get version() {
    return this.db?.meta?.version ?? null;
  }
  get builtAt() {
    return this.db?.meta?.builtAt ?? null;
  }
  get size() {
    return this.db?.size ?? 0;
  }
  get loaded() {
    return this.db?.attached ?? false;
  }
  /** the database connection (search and the domain resolver read it) */
  get database(): CatalogDb {
    if (!this.db) throw new Error("the catalog is not loaded yet");
    return this.db;
  }

  /** Open the source's current catalog file and swap it in. */
  async load(): Promise<void> {
    this.use(await this.source.file());
  }

  /** Open a catalog database file (checked before the swap) and tell the listeners. */
  use(file: string) {
    const next = new CatalogDb();
    try {
      next.attach(file);
    } catch (err) {
      next.close();
      throw err;
    }
    const before = this.db;
    this.db = next;
    this.brands.clear();
    this.jsonCache.clear();
    this.slugIds.clear();
    if (before) for (const listener of this.swapListeners) this.tell(() => listener(before));
    before?.close();
    this.emit();
  }

  /** Poll the source every `ms` and reload when its version changed. */
  watch(ms: number) {
    // a reload slower than `ms` is not started again on the next tick
    this.timer = repeat(
      ms,
      async () => {
        const v = await this.source.version();
        if (v && v !== this.version) {
          await this.load();
          log("info", "catalog reloaded", { version: v, brands: this.size });
        }
      },
      "catalog refresh failed",
    );
  }

  /** Call `listener` after every load (no argument) and every update (the new brand). */
  onChange(listener: (updated?: Brand) => void) {
    this.listeners.push(listener);
  }

  /**
   * Call `listener` with the outgoing database when a load replaces one, before it is closed
   * (synchronously: it closes when the listener returns).
   */
  beforeSwap(listener: (outgoing: CatalogDb) => void) {
    this.swapListeners.push(listener);
  }

  private emit(updated?: Brand) {
    for (const listener of this.listeners) this.tell(() => listener(updated));
  }

  private tell(call: () => void) {
    try {
      call();
    } catch (err) {
      log("warn", "catalog change listener failed", { reason: (err as Error).message });
    }
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
  }

  /** Stop polling and close the database. */
  close() {
    this.stop();
    this.db?.close();
    this.db = null;
    if (this.installed) removeInstalled(this.installed);
    this.installed = null;
  }

  /**
   * Serve a catalog given as data (tests, scripts): written into a temp database file first.
   * Brands are taken in id order.
   */
  install(built: BuiltCatalog) {
    const dir = mkdtempSync(join(tmpdir(), "bapi-catalog-db-"));
    installedDirs.add(dir);
    const file = join(dir, "catalog.sqlite");
    const brands = [...built.brands].sort((a, b) => a.id - b.id);
    writeCatalogFileSync(file, built, brands, (f) => new DatabaseSync(f));
    const before = this.installed;
    this.use(file);
    this.installed = dir;
    if (before) removeInstalled(before);
  }

  /** A catalog of these brands alone (scripts and tests). */
  static of(brands: readonly Brand[], version = "local"): CatalogService {
    const catalog = new CatalogService({
      file: async () => {
        throw new Error("a catalog of given brands has no source file");
      },
      version: async () => version,
    });
    catalog.install({ version, builtAt: new Date(0).toISOString(), brands: [...brands] });
    return catalog;
  }

  /** Every brand in id order, read from the database (scripts and tests: never on a request). */
  all(): Brand[] {
    return [...this.each()];
  }

  /** Every brand in id order, read a thousand at a time (the admin CLI; never on a request). */
  *each(): Generator<Brand> {
    if (!this.db) return;
    for (const b of this.db.each()) yield this.overlay ? this.overlay.apply(b) : b;
  }

  brand(slug: string): Brand | undefined {
    const key = slug.toLowerCase();
    let id = this.slugIds.get(key);
    if (id === undefined) {
      id = this.db?.idBySlug(key);
      if (id === undefined) return undefined;
      this.slugIds.set(key, id);
    }
    return this.brandById(id);
  }

  /** The brand with this id as readers see it (the overlay applied). */
  brandById(id: number): Brand | undefined {
    const b = this.stored(id);
    return b && this.overlay ? this.overlay.apply(b) : b;
  }

  /** The catalog's own brand with this id, from the cache or the database. */
  private stored(id: number): Brand | undefined {
    const hit = this.brands.get(id);
    if (hit) return hit;
    const b = this.db?.brand(id);
    if (b) this.brands.set(id, b);
    return b;
  }

  /** Lay `overlay` over every brand read from now on. */
  useOverlay(overlay: BrandOverlay) {
    this.overlay = overlay;
    this.jsonCache.clear();
  }

  /** The overlay of a brand changed: its cached view goes, listeners see it as updated. */
  overlayChanged(id: number) {
    this.jsonCache.delete(id);
    this.slugIds.clear();
    const b = this.brandById(id);
    this.emit(b);
  }

  /** Ids of the brands an overlay changes (none without one). */
  pinnedIds(): Iterable<number> {
    return this.overlay?.pinnedIds() ?? [];
  }

  /** The brand a normalized host names exactly (its own domain, or a host pinned to it), if any. */
  brandByHost(host: string): Brand | undefined {
    const pinned = this.overlay?.hostSlug(host);
    const pin = pinned === undefined ? undefined : this.brand(pinned);
    if (pin) return pin;
    const id = this.db?.idByHost(host);
    return id === undefined ? undefined : this.brandById(id);
  }

  /** Replace one brand's record (enrichment results) and refresh its view. */
  update(next: Brand) {
    const before = this.stored(next.id);
    if (!this.db || !before) return;
    const brand = this.overlay ? this.overlay.strip(next, before) : next;
    if (before.slug !== brand.slug) this.slugIds.clear();
    this.db.put(brand);
    this.forget(brand.id);
    this.emit(this.brandById(brand.id));
  }

  /**
   * Add a brand the built catalog does not have (a discovered brand); a brand with its id
   * already present is updated instead, one whose slug is taken is not added.
   */
  add(brand: Brand) {
    if (!this.db) return;
    if (this.brandById(brand.id)) return this.update(brand);
    if (this.db.idBySlug(brand.slug) !== undefined) return;
    this.db.put(brand);
    this.forget(brand.id);
    this.emit(brand);
  }

  /** Remove an added brand (a discovered brand taken down); listeners see a full change. */
  remove(id: number) {
    if (!this.db) return;
    this.db.remove(id);
    this.slugIds.clear();
    this.forget(id);
    this.emit();
  }

  private forget(id: number) {
    this.brands.delete(id);
    this.jsonCache.delete(id);
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
   * when the brand changes or the catalog reloads). The by-slug route, list pages, batch and
   * search responses are assembled from these strings.
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

  /** Made on each call (cheap), not kept per brand. */
  viewOf(brand: Brand): ServiceView {
    return toServiceView(this.overlay ? this.overlay.apply(brand) : brand);
  }

  private pageBrands(limit: number, offset: number, artwork?: boolean): Brand[] {
    const ids = this.db?.page(limit, offset, artwork) ?? [];
    return ids.map((id) => this.brandById(id)).filter((b): b is Brand => b !== undefined);
  }

  /**
   * One page in id order (stable across rebuilds: new brands get higher ids). `artwork` true
   * keeps brands with at least one stored SVG, false the directory entries without; undefined
   * lists every brand.
   */
  list(limit: number, offset: number, artwork?: boolean) {
    const items = this.pageBrands(limit, offset, artwork).map((b) => this.viewOf(b));
    return { items, total: this.db?.total(artwork) ?? 0, limit, offset };
  }

  /** list() as JSON text, assembled from pre-serialized entries (same content and key order). */
  listJson(limit: number, offset: number, artwork?: boolean): string {
    const items = this.pageBrands(limit, offset, artwork).map((b) => this.entryJson(b));
    const total = this.db?.total(artwork) ?? 0;
    return `{"items":[${items.join(",")}],"total":${total},"limit":${limit},"offset":${offset}}`;
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
