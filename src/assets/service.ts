/**
 * Logo delivery: which SVG a request gets (variant resolution, tier restriction, placeholder),
 * validators, and rasterised renders through the render cache. Plain TS, no HTTP types.
 */
import { createHash } from "node:crypto";
import type { Brand, StoredSvg, Variant } from "../catalog/types";
import { log } from "../platform/log";
import type { Tier } from "../quota/limits";
import type { RenderFormat } from "./model";
import { monogramSvg } from "./monogram";
import { fromPrerendered } from "./prerender";
import { DEFAULT_LAYOUT, type Layout, layoutTag, RENDER_VERSION } from "./render";
import type { RenderCache } from "./render-cache";
import { RenderBusy, type Renderer } from "./render-pool";

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
}

export interface ServedSvg extends Prepared {
  /** the variant actually served, or "placeholder" */
  variant: Variant | "placeholder";
  /** the variant the caller asked for when its tier does not allow it (mono was used) */
  restricted: Variant | null;
  /** null for the placeholder */
  brandId: number | null;
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

export interface AssetCatalog {
  brand(slug: string): Brand | undefined;
}

/** renders that failed and are answered with the placeholder; cleared past this many */
const MAX_FAILED = 10_000;

export class AssetService {
  /** render keys of artwork that failed to render (a new artwork hash is tried again) */
  private failed = new Set<string>();

  constructor(
    private catalog: AssetCatalog,
    private renderer: Renderer,
    readonly cache: RenderCache,
    /** svg sha256 → pre-rendered 2048 px PNG of marks too slow to render on demand */
    private prerendered: ReadonlyMap<string, string> = new Map(),
  ) {}

  /**
   * The SVG for a request, or null when the slug does not exist. Reads the brand every time.
   * `monogram`: the brand's lettermark instead of the generic placeholder (issue 25).
   */
  resolve(slug: string, requested: Variant, tier: Tier, monogram = false): ServedSvg | null {
    const brand = this.catalog.brand(slug);
    if (!brand) return null;
    const restricted = allowedVariant(tier, requested) === requested ? null : requested;
    const variant = pickVariant(brand.variants, requested, tier);
    const stored = variant ? brand.variants[variant] : undefined;
    if ((!variant || !stored) && monogram) {
      return { ...prepare(monogramSvg(brand)), variant: "placeholder", restricted, brandId: null };
    }
    if (!variant || !stored) return placeholder(restricted);
    return { ...prepareStored(stored), variant, restricted, brandId: brand.id };
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
    return this.cache.get(key, () =>
      png
        ? fromPrerendered(png, size, format, layout)
        : this.renderer.render(served.svg, size, format, layout),
    );
  }

  close(): Promise<void> {
    return this.renderer.close();
  }
}
