/**
 * SVG -> PNG (@resvg/resvg-js) and SVG -> WebP (resvg's pixels encoded by sharp).
 *
 * Output is always exactly size x size pixels on a transparent background. The mark's painted
 * bounds (resvg's bounding box of everything visible, strokes and filters included) are placed
 * by a `Layout` (docs/assets.md, "Safe area and optical size"):
 *  - `padding`: a safe area of that percentage of the size on every side is left empty;
 *  - `fit: "optical"` (default): area-based scaling, so marks of any shape carry the same
 *    visual weight in a logo wall: the mark gets the area of a square OPTICAL_SQUARE of the
 *    safe area's side, capped by the safe area (a 2:1 wordmark is as heavy as a square symbol;
 *    a 4:1 one, capped by the width, is lighter but no longer a sliver);
 *  - `fit: "contain"`: the longer side fills the safe area.
 * The frame is made by rewriting the root viewBox around the painted bounds, so one resvg
 * render gives the final image with no second pass.
 *
 * The native modules are loaded on first use, so importing this file never requires them.
 */

/** The raster formats a logo renders to. */
export type RenderFormat = "png" | "webp";

/** Bumped whenever the renderer's output for the same input changes (it is part of ETags). */
export const RENDER_VERSION = 2;

export const FITS = ["optical", "contain"] as const;
export type Fit = (typeof FITS)[number];

export interface Layout {
  fit: Fit;
  /** empty margin on each side, percent of the size (0..40) */
  padding: number;
  /**
   * at most this many output pixels per SVG user unit: a raster logo drawn by an SVG (one unit
   * per source pixel) is never enlarged past twice its pixels; it stays centred, smaller
   */
  maxScale?: number;
}

export const MAX_PADDING = 40;
export const DEFAULT_LAYOUT: Layout = { fit: "optical", padding: 8 };
/** Under `fit: "optical"`, a square mark's side as a share of the safe area's side. */
export const OPTICAL_SQUARE = 0.75;

/** A layout's part of render cache keys and ETags ("optical-p8"). */
export const layoutTag = (layout: Layout) => `${layout.fit}-p${layout.padding}`;

/**
 * Where a mark whose painted bounds are `width` x `height` goes in a size x size image: its
 * drawn size and top-left corner, in pixels (fractional).
 */
export function placement(
  width: number,
  height: number,
  size: number,
  layout: Layout,
): { w: number; h: number; x: number; y: number } {
  const inner = size * (1 - (2 * layout.padding) / 100);
  const aspect = width / height;
  let w: number;
  let h: number;
  if (layout.fit === "contain") {
    w = aspect >= 1 ? inner : inner * aspect;
    h = aspect >= 1 ? inner / aspect : inner;
  } else {
    const area = (OPTICAL_SQUARE * inner) ** 2;
    w = Math.sqrt(area * aspect);
    h = Math.sqrt(area / aspect);
    const fit = Math.min(1, inner / w, inner / h);
    w *= fit;
    h *= fit;
  }
  return { w, h, x: (size - w) / 2, y: (size - h) / 2 };
}

type ResvgModule = typeof import("@resvg/resvg-js");
type SharpModule = typeof import("sharp");
let resvg: Promise<ResvgModule> | null = null;
let sharp: Promise<SharpModule["default"]> | null = null;

const ROOT_TAG = /<svg\b((?:[^>"']|"[^"]*"|'[^']*')*)>/;
const ATTR = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const DROP = new Set(["width", "height", "viewbox", "preserveaspectratio"]);

function parseNumbers(value: string): number[] {
  return value
    .trim()
    .split(/[\s,]+/)
    .map(Number);
}

/** A plain user-unit length ("24", "24px"); null for %, em and other relative units. */
function plainLength(value: string | undefined): number | null {
  if (value === undefined) return null;
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*(?:px)?\s*$/i.exec(value);
  return m ? Number(m[1]) : null;
}

/**
 * The root <svg> rewritten so its viewBox is square (the shorter side widened equally on both
 * sides) with width/height/preserveAspectRatio removed; the rest of the document untouched.
 * `fallbackSize` gives the intrinsic size when the root has neither a viewBox nor plain
 * width/height. Returns null when no usable frame can be found (the caller renders as is).
 */
export function squareFrame(
  svg: string,
  fallbackSize?: { width: number; height: number },
): string | null {
  const root = ROOT_TAG.exec(svg);
  if (!root) return null;
  const attrs = rootAttributes(root[1] ?? "");
  const get = (name: string) => attrs.find(([k]) => k.toLowerCase() === name)?.[1];
  let box: number[] | null = null;
  const viewBox = get("viewbox");
  if (viewBox !== undefined) box = parseNumbers(viewBox);
  else {
    const w = plainLength(get("width"));
    const h = plainLength(get("height"));
    if (w !== null && h !== null) box = [0, 0, w, h];
    else if (fallbackSize) box = [0, 0, fallbackSize.width, fallbackSize.height];
  }
  if (box?.length !== 4 || !box.every(Number.isFinite)) return null;
  const [x, y, w, h] = box as [number, number, number, number];
  if (w <= 0 || h <= 0) return null;
  const side = Math.max(w, h);
  return withViewBox(svg, [x - (side - w) / 2, y - (side - h) / 2, side, side]);
}

function rootAttributes(source: string): [string, string][] {
  const attrs: [string, string][] = [];
  for (const m of source.matchAll(ATTR)) attrs.push([m[1] ?? "", m[2] ?? m[3] ?? ""]);
  return attrs;
}

/**
 * The root <svg> rewritten with the given viewBox, width/height/preserveAspectRatio removed;
 * the rest of the document untouched. Null when there is no root element.
 */
export function withViewBox(svg: string, box: number[]): string | null {
  const root = ROOT_TAG.exec(svg);
  if (!root) return null;
  const kept = rootAttributes(root[1] ?? "")
    .filter(([k]) => !DROP.has(k.toLowerCase()))
    .map(([k, v]) => ` ${k}="${v.replaceAll('"', "&quot;")}"`)
    .join("");
  const tag = `<svg${kept} viewBox="${box.map((n) => +n.toFixed(6)).join(" ")}">`;
  const selfClosing = /\/\s*$/.test(root[1] ?? "");
  const start = root.index;
  const end = start + root[0].length;
  return svg.slice(0, start) + (selfClosing ? `${tag}</svg>` : tag) + svg.slice(end);
}

/**
 * Premultiplied RGBA (resvg's pixels) to straight RGBA, in place, rounding exactly as resvg's
 * PNG encoder (tiny-skia) does, so a lossless WebP decodes to the PNG's pixels exactly.
 */
export function demultiply(pixels: Uint8Array): Uint8Array {
  for (let i = 0; i < pixels.length; i += 4) {
    const a = pixels[i + 3] as number;
    if (a === 255 || a === 0) continue;
    const f = a / 255;
    for (let c = i; c < i + 3; c++)
      pixels[c] = Math.min(255, Math.floor((pixels[c] as number) / f + 0.5));
  }
  return pixels;
}

/**
 * Render `svg` into a size x size PNG or WebP (transparent background), its painted bounds
 * placed by `layout`.
 */
export async function renderRaster(
  svg: string,
  size: number,
  format: RenderFormat,
  layout: Layout = DEFAULT_LAYOUT,
): Promise<Uint8Array> {
  resvg ??= import("@resvg/resvg-js");
  const { Resvg } = await resvg;
  // system fonts take ~4 ms to load per render; only artwork with text needs them
  const font = { loadSystemFonts: /<text\b/.test(svg) };
  // the painted bounds, from a small render of the whole canvas (resvg's innerBBox is not
  // reliable for masked and filtered artwork)
  let square = squareFrame(svg);
  if (square === null) {
    const probe = new Resvg(svg, { font });
    square = squareFrame(svg, { width: probe.width, height: probe.height }) ?? svg;
  }
  let framed = square;
  const frame = viewBoxOf(square);
  if (frame) {
    const probeSize = Math.min(PROBE_MAX, Math.max(32, size));
    const probe = new Resvg(square, { font, fitTo: { mode: "width", value: probeSize } }).render();
    const px = alphaBounds(probe.pixels, probe.width, probe.height);
    if (px) {
      // every pixel with any paint is inside, so the painted bounds are never cut
      const [fx, fy, side] = frame as [number, number, number];
      const unit = side / probe.width;
      const bx = fx + px.x * unit;
      const by = fy + px.y * unit;
      const bw = px.width * unit;
      const bh = px.height * unit;
      let at = placement(bw, bh, size, layout);
      if (layout.maxScale && at.w / bw > layout.maxScale) {
        const [w, h] = [bw * layout.maxScale, bh * layout.maxScale];
        at = { w, h, x: (size - w) / 2, y: (size - h) / 2 };
      }
      const scale = at.w / bw;
      framed =
        withViewBox(square, [bx - at.x / scale, by - at.y / scale, size / scale, size / scale]) ??
        square;
    }
  }
  const image = new Resvg(framed, { font, fitTo: { mode: "width", value: size } }).render();
  if (format === "png") return new Uint8Array(image.asPng());
  return encodeWebp(demultiply(image.pixels), image.width, image.height);
}

/** Straight RGBA pixels as lossless WebP (exact: transparent pixels keep their colour). */
/**
 * The largest probe render that finds a mark's painted bounds (the probe is the output size,
 * 32 at least: bounds within one output pixel up to 128 px, within 1/128 of the size above).
 */
const PROBE_MAX = 128;

/** The root viewBox of a framed SVG (x, y, width, height), or null. */
function viewBoxOf(svg: string): number[] | null {
  const root = ROOT_TAG.exec(svg);
  const value = rootAttributes(root?.[1] ?? "").find(([k]) => k.toLowerCase() === "viewbox")?.[1];
  const box = value === undefined ? null : parseNumbers(value);
  return box?.length === 4 && box.every(Number.isFinite) ? box : null;
}

/**
 * The bounding box of the pixels with any alpha in RGBA (or premultiplied RGBA) pixels, or
 * null when nothing is painted.
 */
export function alphaBounds(
  rgba: Uint8Array,
  width: number,
  height: number,
): { x: number; y: number; width: number; height: number } | null {
  let x0 = width;
  let y0 = height;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width * 4;
    for (let x = 0; x < width; x++) {
      if (rgba[row + x * 4 + 3] === 0) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

export async function encodeWebp(
  pixels: Uint8Array,
  width: number,
  height: number,
): Promise<Uint8Array> {
  sharp ??= import("sharp").then((m) => m.default);
  const encoder = await sharp;
  const webp = await encoder(pixels, { raw: { width, height, channels: 4 } })
    .webp({ lossless: true, exact: true, effort: 2 })
    .toBuffer();
  // a copy in a plain ArrayBuffer: sharp's Buffer memory cannot be transferred between threads
  return new Uint8Array(webp);
}
