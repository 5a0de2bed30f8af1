/**
 * Pre-rendered artwork: marks too slow to render on demand (over 500 ms at 2048 px, measured
 * by scripts/prerender.ts after the catalog build) are kept as one 2048 px PNG each, named by
 * the SVG's sha256, beside the built catalog (build/prerender/). A request for such a mark is
 * answered by downscaling that PNG with sharp (tens of ms) instead of running resvg (seconds).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { log } from "../platform/log";
import { alphaBounds, DEFAULT_LAYOUT, type Layout, placement, type RenderFormat } from "./render";

export const PRERENDER_SIZE = 2048;
export const PRERENDER_MANIFEST = "manifest.json";

export interface PrerenderManifest {
  size: number;
  thresholdMs: number;
  /** svg sha256 → render time measured at `size`, ms */
  marks: Record<string, { ms: number }>;
}

/** svg sha256 → PNG path, for the marks of `dir`'s manifest whose file exists. */
export function loadPrerendered(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const manifest = join(dir, PRERENDER_MANIFEST);
  if (!existsSync(manifest)) return out;
  try {
    const m = JSON.parse(readFileSync(manifest, "utf8")) as PrerenderManifest;
    for (const sha of Object.keys(m.marks ?? {})) {
      const path = join(dir, `${sha}.png`);
      if (/^[0-9a-f]{64}$/.test(sha) && existsSync(path)) out.set(sha, path);
    }
  } catch (err) {
    log("warn", "pre-rendered marks not loaded; slow marks render on demand", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
  return out;
}

/**
 * The pre-rendered PNG at `size` x `size` in `format`, laid out like a render (render.ts
 * `placement`): its painted bounds, found on its alpha channel, scaled into place by sharp.
 */
export async function fromPrerendered(
  path: string,
  size: number,
  format: RenderFormat,
  layout: Layout = DEFAULT_LAYOUT,
): Promise<Uint8Array> {
  const sharp = (await import("sharp")).default;
  const { data, info } = await sharp(path)
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const bounds = alphaBounds(data, info.width, info.height) ?? {
    x: 0,
    y: 0,
    width: info.width,
    height: info.height,
  };
  const at = placement(bounds.width, bounds.height, size, layout);
  const w = Math.max(1, Math.round(at.w));
  const h = Math.max(1, Math.round(at.h));
  const left = Math.round((size - w) / 2);
  const top = Math.round((size - h) / 2);
  const transparent = { r: 0, g: 0, b: 0, alpha: 0 };
  const placed = await sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
    .extract({ left: bounds.x, top: bounds.y, width: bounds.width, height: bounds.height })
    .resize(w, h, { fit: "fill", kernel: "lanczos3" })
    .toBuffer();
  const img = sharp(placed, { raw: { width: w, height: h, channels: 4 } }).extend({
    left,
    top,
    right: size - w - left,
    bottom: size - h - top,
    background: transparent,
  });
  const out =
    format === "png"
      ? await img.png().toBuffer()
      : await img.webp({ lossless: true, exact: true, effort: 2 }).toBuffer();
  return new Uint8Array(out);
}
