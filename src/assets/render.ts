/**
 * SVG -> PNG (@resvg/resvg-js) and SVG -> WebP (resvg's pixels encoded by sharp).
 *
 * Output is always exactly size x size pixels: the artwork keeps its aspect ratio, is scaled
 * so its longer side fills the box, and is centered on a transparent background. The square
 * frame is made by widening the root viewBox along the shorter side (`squareFrame`), so one
 * resvg render gives the final image with no second pass.
 *
 * The native modules are loaded on first use, so importing this file never requires them.
 */
import type { RenderFormat } from "./model";

/** Bumped whenever the renderer's output for the same input changes (it is part of ETags). */
export const RENDER_VERSION = 1;

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
  const attrs: [string, string][] = [];
  for (const m of (root[1] ?? "").matchAll(ATTR)) attrs.push([m[1] ?? "", m[2] ?? m[3] ?? ""]);
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
  const frame = [x - (side - w) / 2, y - (side - h) / 2, side, side].map((n) => +n.toFixed(6));
  const kept = attrs
    .filter(([k]) => !DROP.has(k.toLowerCase()))
    .map(([k, v]) => ` ${k}="${v.replaceAll('"', "&quot;")}"`)
    .join("");
  const tag = `<svg${kept} viewBox="${frame.join(" ")}">`;
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

/** Render `svg` into a size x size PNG or WebP (transparent background, artwork centered). */
export async function renderRaster(
  svg: string,
  size: number,
  format: RenderFormat,
): Promise<Uint8Array> {
  resvg ??= import("@resvg/resvg-js");
  const { Resvg } = await resvg;
  // system fonts take ~4 ms to load per render; only artwork with text needs them
  const font = { loadSystemFonts: /<text\b/.test(svg) };
  let framed = squareFrame(svg);
  if (framed === null) {
    const probe = new Resvg(svg, { font });
    framed = squareFrame(svg, { width: probe.width, height: probe.height }) ?? svg;
  }
  const image = new Resvg(framed, { font, fitTo: { mode: "width", value: size } }).render();
  if (format === "png") return new Uint8Array(image.asPng());
  sharp ??= import("sharp").then((m) => m.default);
  const encoder = await sharp;
  const webp = await encoder(demultiply(image.pixels), {
    raw: { width: image.width, height: image.height, channels: 4 },
  })
    .webp({ lossless: true, exact: true, effort: 2 })
    .toBuffer();
  // a copy in a plain ArrayBuffer: sharp's Buffer memory cannot be transferred between threads
  return new Uint8Array(webp);
}
