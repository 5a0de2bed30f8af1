/**
 * Logo delivery: which SVG a request gets (variant resolution, tier restriction, placeholder),
 * validators, and rasterised renders through the render cache. Plain TS, no HTTP types.
 */
import { createHash } from "node:crypto";
import type { Brand, StoredSvg, Variant } from "../catalog/built-catalog";
import { contrastRatio } from "../catalog/colors";
import { rasterSide } from "../catalog/discovery/artwork";
import { type Provenance, provenanceOf } from "../catalog/provenance";
import { hasArtwork } from "../catalog/service";
import { log } from "../platform/log";
import { renderDuration, renderRefused } from "../platform/process-metrics";
import type { Tier } from "../quota/limits";
import { MIN_GRAPHIC_CONTRAST, medianContrast } from "./contrast";
import { monogramSvg } from "./monogram";
import { fromPrerendered } from "./prerender";
import type { RenderFormat } from "./render";
import { DEFAULT_LAYOUT, type Layout, layoutTag, RENDER_VERSION } from "./render";
import type { RenderCache } from "./render-cache";
import { RenderBusy, type Renderer, WorkerPool } from "./render-pool";
import { greyscaleSvg, solidSvg } from "./transform";

/** The generic placeholder served (200) when a brand has no stored SVG the caller may get. */
export const PLACEHOLDER_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" role="img">' +
  "<title>Logo not available</title>" +
  '<rect x="1" y="1" width="22" height="22" rx="5" fill="#e5e7eb"/>' +
  '<circle cx="9" cy="8.5" r="1.75" fill="#9ca3af"/>' +
  '<path d="M5.5 17.5 10 11.75l3 3.75 2-2.5 3.5 4.5z" fill="#9ca3af"/>' +
  "</svg>";

/** Cache-Control of real artwork and of the placeholder (SPEC: GET /v1/svg/{slug}). */
export const CACHE_ARTWORK = "public, max-age=86400";
export const CACHE_PLACEHOLDER = "public, max-age=3600";

/** Variants a paid key falls back to, in order, when neither the requested one nor mono exists. */
export const PAID_FALLBACK: readonly Variant[] = ["color", "icon", "wordmark", "light", "dark"];

interface Prepared {
  svg: string;
  bytes: Uint8Array;
  /** sha256 hex of `bytes` */
  sha256: string;
  /** for a discovered raster mark (an SVG drawing a PNG): the PNG's longer side in pixels */
  rasterSide?: number;
}

export interface ServedSvg extends Prepared {
  /** the variant actually served, or "placeholder" */
  variant: Variant | "placeholder";
  /** the variant the caller asked for when its tier does not allow it (mono was used) */
  restricted: Variant | null;
  /** null for the placeholder */
  brandId: number | null;
  /** where the served artwork came from (absent for the placeholder) */
  provenance?: Provenance;
}

export interface ServedRaster {
  bytes: Uint8Array;
  /** what was rendered (the placeholder when the artwork failed to render) */
  source: ServedSvg;
  etag: string;
}

function prepare(svg: string): Prepared {
  const bytes = new TextEncoder().encode(svg);
  return { svg, bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}

const PLACEHOLDER: Prepared = prepare(PLACEHOLDER_SVG);
/** Encoded bytes and hash per stored SVG object (brand updates bring new objects). */
const prepared = new WeakMap<StoredSvg, Prepared>();

function prepareStored(stored: StoredSvg): Prepared {
  let p = prepared.get(stored);
  if (!p) {
    p = prepare(stored.svg);
    const side = rasterSide(stored.source);
    if (side) p.rasterSide = side;
    prepared.set(stored, p);
  }
  return p;
}

/** The variant a tier may receive for `requested`: free keys get mono only. */
export function allowedVariant(tier: Tier, requested: Variant): Variant {
  return tier === "free" ? "mono" : requested;
}

/**
 * SPEC resolution rules: the requested (allowed) variant when stored, else the stored mono;
 * when mono is missing too, paid keys get the first stored of PAID_FALLBACK and free keys the
 * placeholder; a brand with no stored SVG gets the placeholder.
 */
export function pickVariant(
  variants: Brand["variants"],
  requested: Variant,
  tier: Tier,
): Variant | null {
  const allowed = allowedVariant(tier, requested);
  if (variants[allowed]) return allowed;
  if (variants.mono) return "mono";
  if (tier === "free") return null;
  return PAID_FALLBACK.find((v) => variants[v]) ?? null;
}

export function placeholder(restricted: Variant | null = null): ServedSvg {
  return { ...PLACEHOLDER, variant: "placeholder", restricted, brandId: null };
}

/** Strong ETag of a served SVG: its bytes' sha256. */
export function svgEtag(served: ServedSvg): string {
  return `"${served.sha256}"`;
}

/** Strong ETag of a render: source hash, size, format, layout and renderer version. */
export function rasterEtag(
  served: ServedSvg,
  size: number,
  format: RenderFormat,
  layout: Layout = DEFAULT_LAYOUT,
): string {
  return `"${served.sha256.slice(0, 40)}-${size}-${format}-${layoutTag(layout)}-r${RENDER_VERSION}"`;
}

/** If-None-Match (weak comparison, RFC 9110 13.1.2) against the current ETag. */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const bare = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === bare);
}

/** Render cache key: brand, variant, artwork hash, size, format and layout. */
function renderKey(served: ServedSvg, size: number, format: RenderFormat, layout: Layout): string {
  return `${served.brandId ?? "-"}:${served.variant}:${served.sha256}:${size}:${format}:${layoutTag(layout)}`;
}

/** The same served artwork with other markup (an image option applied). */
export function reworked(served: ServedSvg, svg: string): ServedSvg {
  return { ...served, ...prepare(svg) };
}

/** What a brand without artwork the caller may get is answered with. */
export type Fallback = "placeholder" | "monogram" | "404";

/** The image options of /i/ URLs (and of the /v1 raster routes, where they apply). */
export interface ImageOptions {
  variant: Variant;
  fallback: Fallback;
  greyscale: boolean;
  /** the page background the image will sit on, 6 hex characters; null = not given */
  bg: string | null;
}

/** Size of the render the `bg` choice measures its contrast on. */
export const CONTRAST_PROBE_SIZE = 64;

/** Variants tried for a background, after the one asked for: the one drawn for it first. */
const BG_ORDER = (darkPage: boolean): Variant[] =>
  darkPage
    ? ["dark", "color", "mono", "light", "icon", "wordmark"]
    : ["light", "color", "mono", "dark", "icon", "wordmark"];

export interface AssetCatalog {
  brand(slug: string): Brand | undefined;
}

let sharpModule: Promise<typeof import("sharp").default> | null = null;

/** renders that failed and are answered with the placeholder; cleared past this many */
const MAX_FAILED = 10_000;

export class AssetService {
  /** render keys of artwork that failed to render (a new artwork hash is tried again) */
  private failed = new Set<string>();
  /** called (never awaited) when a request names a brand with no artwork (web discovery) */
  onMissingArtwork: ((brand: Brand) => void) | null = null;

  constructor(
    private catalog: AssetCatalog,
    private renderer: Renderer,
    readonly cache: RenderCache,
    /** svg sha256 → pre-rendered 2048 px PNG of marks too slow to render on demand */
    private prerendered: ReadonlyMap<string, string> = new Map(),
  ) {}

  /**
   * The SVG for a request, or null when the slug does not exist. Reads the brand every time.
   * `monogram`: the brand's lettermark instead of the generic placeholder.
   */
  resolve(slug: string, requested: Variant, tier: Tier, monogram = false): ServedSvg | null {
    const brand = this.catalog.brand(slug);
    if (!brand) return null;
    if (this.onMissingArtwork && !hasArtwork(brand)) this.onMissingArtwork(brand);
    const restricted = allowedVariant(tier, requested) === requested ? null : requested;
    const variant = pickVariant(brand.variants, requested, tier);
    const stored = variant ? brand.variants[variant] : undefined;
    if ((!variant || !stored) && monogram) {
      return { ...prepare(monogramSvg(brand)), variant: "placeholder", restricted, brandId: null };
    }
    if (!variant || !stored) return placeholder(restricted);
    const provenance = provenanceOf(brand, variant) ?? undefined;
    return {
      ...prepareStored(stored),
      variant,
      restricted,
      brandId: brand.id,
      ...(provenance ? { provenance } : {}),
    };
  }

  /** Whether the catalog has this slug. */
  exists(slug: string): boolean {
    return this.catalog.brand(slug) !== undefined;
  }

  /**
   * The SVG for a request with image options, or null when the slug does not exist, or
   * "hidden" when the brand has no artwork the caller may get and `fallback` is 404. The
   * placeholder (generic or monogram) gets `bg` and `greyscale` like artwork. Without
   * `bg` the answer is synchronous (the hot path); with it, candidate variants are rendered at
   * CONTRAST_PROBE_SIZE and the first whose pixels reach MIN_GRAPHIC_CONTRAST on the background
   * is served (see selectForBackground).
   */
  select(
    slug: string,
    opts: ImageOptions,
    tier: Tier,
  ): ServedSvg | null | "hidden" | Promise<ServedSvg> {
    const base = this.resolve(slug, opts.variant, tier, opts.fallback === "monogram");
    if (!base) return null;
    if (base.variant === "placeholder" && opts.fallback === "404") return "hidden";
    const shade = (s: ServedSvg) => (opts.greyscale ? reworked(s, greyscaleSvg(s.svg)) : s);
    if (!opts.bg) return shade(base);
    return this.selectForBackground(slug, base, opts.bg, tier, shade);
  }

  /**
   * The artwork that stands out on `bg`: the served variant, else the variant drawn for a page
   * of that lightness, then the others the tier may get, each measured on its rendered pixels;
   * when none reaches MIN_GRAPHIC_CONTRAST, the served variant's silhouette in black or white,
   * whichever contrasts more with `bg` (at least 4.58:1 on any colour).
   */
  private async selectForBackground(
    slug: string,
    base: ServedSvg,
    bg: string,
    tier: Tier,
    shade: (s: ServedSvg) => ServedSvg,
  ): Promise<ServedSvg> {
    const brand = this.catalog.brand(slug);
    const darkPage = contrastRatio(bg, "ffffff") > contrastRatio(bg, "000000");
    const tried = new Set<string>();
    const candidates: ServedSvg[] = [base];
    for (const v of base.variant === "placeholder" ? [] : BG_ORDER(darkPage)) {
      const stored = brand?.variants[v];
      if (!stored || allowedVariant(tier, v) !== v) continue;
      const provenance = brand ? provenanceOf(brand, v) : null;
      candidates.push({
        ...prepareStored(stored),
        variant: v,
        restricted: base.restricted,
        brandId: base.brandId,
        ...(provenance ? { provenance } : {}),
      });
    }
    for (const candidate of candidates) {
      if (tried.has(candidate.sha256)) continue;
      tried.add(candidate.sha256);
      const shaded = shade(candidate);
      const pixels = await this.pixels(shaded, CONTRAST_PROBE_SIZE).catch(() => null);
      if (pixels && medianContrast(pixels, bg) >= MIN_GRAPHIC_CONTRAST) return shaded;
    }
    const ink = contrastRatio(bg, "ffffff") >= contrastRatio(bg, "000000") ? "ffffff" : "000000";
    return reworked(base, solidSvg(base.svg, ink));
  }

  /** Straight RGBA pixels of `served` rendered at `size` (through the render cache). */
  async pixels(served: ServedSvg, size: number): Promise<Uint8Array> {
    const png = await this.render(served, size, "png", DEFAULT_LAYOUT);
    sharpModule ??= import("sharp").then((m) => m.default);
    const { data } = await (await sharpModule)(png)
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  /**
   * `served` rendered at `size` in `format`, from the cache when possible. Artwork that fails
   * to render is logged and replaced by the rendered placeholder.
   */
  async raster(
    served: ServedSvg,
    size: number,
    format: RenderFormat,
    layout = DEFAULT_LAYOUT,
  ): Promise<ServedRaster> {
    try {
      return {
        bytes: await this.render(served, size, format, layout),
        source: served,
        etag: rasterEtag(served, size, format, layout),
      };
    } catch (err) {
      // a full queue or a render past its time limit is the service's state, not the artwork's
      if (served.variant === "placeholder" || err instanceof RenderBusy) throw err;
      if (this.failed.size >= MAX_FAILED) this.failed.clear();
      this.failed.add(renderKey(served, size, format, layout));
      log("warn", "artwork failed to render; serving the placeholder", {
        brandId: served.brandId,
        variant: served.variant,
        reason: err instanceof Error ? err.message : String(err),
      });
      const fallback = placeholder(served.restricted);
      return {
        bytes: await this.render(fallback, size, format, layout),
        source: fallback,
        etag: rasterEtag(fallback, size, format, layout),
      };
    }
  }

  /**
   * What a PNG/WebP request for `served` renders: the placeholder once the artwork has failed
   * to render at this size and format, so its ETag (and 304s) and cached render are the
   * placeholder's and the broken artwork is not rendered again on every request.
   */
  rasterSource(
    served: ServedSvg,
    size: number,
    format: RenderFormat,
    layout = DEFAULT_LAYOUT,
  ): ServedSvg {
    return this.failed.has(renderKey(served, size, format, layout))
      ? placeholder(served.restricted)
      : served;
  }

  /** The cached render of `served`, if any (synchronous: the warm path awaits nothing). */
  cachedRaster(
    served: ServedSvg,
    size: number,
    format: RenderFormat,
    layout = DEFAULT_LAYOUT,
  ): Uint8Array | undefined {
    return this.cache.peek(renderKey(served, size, format, layout));
  }

  private render(served: ServedSvg, size: number, format: RenderFormat, layout: Layout) {
    const key = renderKey(served, size, format, layout);
    const png = this.prerendered.get(served.sha256);
    // a discovered raster is never drawn past twice its pixels (centred, smaller, instead)
    const drawn = served.rasterSide ? { ...layout, maxScale: 2 } : layout;
    return this.cache.get(key, () =>
      png
        ? fromPrerendered(png, size, format, layout)
        : this.timedRender(served.svg, size, format, drawn),
    );
  }

  /** A render by the pool, measured (metrics: render_duration_seconds, render_busy_total). */
  private async timedRender(svg: string, size: number, format: RenderFormat, layout: Layout) {
    const started = performance.now();
    try {
      const bytes = await this.renderer.render(svg, size, format, layout);
      renderDuration.labels({ format }).observe((performance.now() - started) / 1000);
      return bytes;
    } catch (err) {
      if (err instanceof RenderBusy) renderRefused.labels({ reason: err.reason }).inc();
      throw err;
    }
  }

  /** The render pool's threads and queue, when it is a pool (metrics). */
  poolStats() {
    return this.renderer instanceof WorkerPool ? this.renderer.stats() : null;
  }

  close(): Promise<void> {
    return this.renderer.close();
  }
}
