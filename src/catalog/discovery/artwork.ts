/**
 * Fetched image bytes -> artwork the catalog can store (never the bytes as fetched).
 *
 * - SVG: sanitized and optimized with the catalog's sanitizer (sanitize.ts: no script,
 *   handlers, foreignObject, external references), needs a frame (viewBox or width/height) and
 *   at least one drawing element, and must render to some visible pixels (resvg).
 * - Raster (PNG, JPEG, WebP, GIF, AVIF, and ICO through decode-ico, largest image): decoded
 *   by sharp (at most 4096x4096 pixels), at least LOW_RES_SIDE on its shorter side (under
 *   MIN_RASTER_SIDE it is flagged lowRes: the caller keeps it only when nothing better), shrunk
 *   to fit STORED_RASTER_SIDE, and re-encoded as PNG. It is stored as an SVG that draws the
 *   PNG (data: URI) at its pixel size, so every asset route serves it like any mark; the PNG
 *   and WebP routes never draw it larger than twice its pixels (Layout.maxScale).
 */
import { createHash } from "node:crypto";
import decodeIco from "decode-ico";
import type { Brand } from "../built-catalog";
import { dominantColor, rgbToHex } from "../colors";
import { deriveEnrichment } from "../enrichment/service";
import type { EnrichmentRecord } from "../enrichment/store/port";
import { sanitizeAndOptimizeSvg } from "../sanitize";

export const MIN_RASTER_SIDE = 32;
/** Smallest raster kept at all: under MIN_RASTER_SIDE it is low-resolution artwork. */
export const LOW_RES_SIDE = 16;
export const STORED_RASTER_SIDE = 256;
const MAX_INPUT_PIXELS = 4096 * 4096;
const RASTER_FORMATS = new Set(["png", "jpeg", "webp", "gif", "avif", "heif"]);

export interface Artwork {
  kind: "svg" | "raster";
  /** the SVG to store: sanitized markup, or the wrapper drawing the re-encoded PNG */
  svg: string;
  /** the stored artwork's size (a raster's pixels after shrinking; an SVG's frame) */
  width: number;
  height: number;
  /** the size as fetched (a raster's pixels before shrinking; an SVG's frame) */
  source: { width: number; height: number };
  /** the one paint colour of a single-colour SVG (a mono mark), else null */
  single: string | null;
  /** the artwork's dominant chromatic colour, or null */
  dominant: string | null;
  /** a raster under MIN_RASTER_SIDE (kept only when a site has nothing larger) */
  lowRes?: boolean;
}

export const sha256 = (data: string | Uint8Array) =>
  createHash("sha256").update(data).digest("hex");

type Sharp = typeof import("sharp")["default"];
let sharpModule: Promise<Sharp> | null = null;
const loadSharp = () => {
  sharpModule ??= import("sharp").then((m) => m.default);
  return sharpModule;
};

const ROOT = /<svg\b[^>]*>/i;
const num = (v: string | undefined) => (v === undefined ? Number.NaN : Number.parseFloat(v));

/** The root's frame: its viewBox, else plain width/height. */
function frameOf(svg: string): { width: number; height: number } | null {
  const root = ROOT.exec(svg)?.[0] ?? "";
  const vb = /\bviewBox\s*=\s*["']([^"']+)["']/i.exec(root)?.[1];
  if (vb) {
    const [, , w, h] = vb
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (w && h && w > 0 && h > 0) return { width: w, height: h };
  }
  const w = num(/\bwidth\s*=\s*["']\s*([\d.]+)(?:px)?\s*["']/i.exec(root)?.[1]);
  const h = num(/\bheight\s*=\s*["']\s*([\d.]+)(?:px)?\s*["']/i.exec(root)?.[1]);
  return w > 0 && h > 0 ? { width: w, height: h } : null;
}

/** Paint colours used by the markup (hex fills, strokes, stops; CSS included). */
function paints(svg: string): string[] {
  const out: string[] = [];
  for (const m of svg.matchAll(
    /(?:fill|stroke|stop-color|color)\s*[=:]\s*["']?\s*(#[0-9a-f]{3,8})\b/gi,
  ))
    out.push(m[1] as string);
  return out;
}

async function visiblePixels(svg: string): Promise<boolean> {
  const { Resvg } = await import("@resvg/resvg-js");
  const image = new Resvg(svg, { fitTo: { mode: "width", value: 64 } }).render();
  const px = image.pixels;
  for (let i = 3; i < px.length; i += 4) if ((px[i] as number) > 16) return true;
  return false;
}

/** A fetched or inline SVG as storable artwork, or null (with the reason thrown as text). */
export async function svgArtwork(
  text: string,
  idPrefix: string,
  forceMono = false,
): Promise<Artwork> {
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (!/^(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?<svg[\s>]/i.test(start))
    throw new Error("not an SVG document");
  let svg: string;
  try {
    svg = sanitizeAndOptimizeSvg(start, idPrefix);
  } catch (err) {
    throw new Error(`SVG does not parse: ${(err as Error).message}`);
  }
  const frame = frameOf(svg);
  if (!frame) throw new Error("SVG has no viewBox or size");
  if (!/<(?:path|rect|circle|ellipse|polygon|polyline|line|text|use)\b/.test(svg))
    throw new Error("SVG draws nothing");
  if (!/\bviewBox=/.test((ROOT.exec(svg) as RegExpExecArray)[0]))
    svg = svg.replace(/<svg\b/, `<svg viewBox="0 0 ${frame.width} ${frame.height}"`);
  if (!(await visiblePixels(svg))) throw new Error("SVG renders empty");
  const colours = paints(svg);
  const distinct = new Set(colours.map((c) => c.toLowerCase()));
  const gradient = /Gradient\b|url\(#/.test(svg);
  const single =
    forceMono || (!gradient && distinct.size <= 1)
      ? (colours[0]
          ? colours[0].length === 4
            ? colours[0].replace(/\w/g, "$&$&")
            : colours[0]
          : "#000000"
        )
          .slice(1, 7)
          .toLowerCase()
      : null;
  return {
    kind: "svg",
    svg,
    width: Math.round(frame.width),
    height: Math.round(frame.height),
    source: { width: Math.round(frame.width), height: Math.round(frame.height) },
    single,
    dominant: dominantColor(colours),
  };
}

const isIco = (b: Uint8Array) => b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0;

/**
 * A fetched raster (or ICO) decoded, checked, shrunk to STORED_RASTER_SIDE (the catalog holds
 * artwork in memory: a 256 px PNG is typically 10-50 KB) and re-encoded as PNG in an SVG wrapper.
 */
export async function rasterArtwork(bytes: Uint8Array): Promise<Artwork> {
  const sharp = await loadSharp();
  let input: ReturnType<Sharp>;
  if (isIco(bytes)) {
    let images: ReturnType<typeof decodeIco>;
    try {
      images = decodeIco(bytes);
    } catch (err) {
      throw new Error(`ICO does not decode: ${(err as Error).message}`);
    }
    const largest = images.sort((a, b) => b.width * b.height - a.width * a.height)[0];
    if (!largest) throw new Error("ICO has no image");
    input =
      largest.type === "png"
        ? sharp(largest.data, { limitInputPixels: MAX_INPUT_PIXELS })
        : sharp(
            Buffer.from(largest.data.buffer, largest.data.byteOffset, largest.data.byteLength),
            {
              raw: { width: largest.width, height: largest.height, channels: 4 },
            },
          );
  } else input = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" });
  let meta: Awaited<ReturnType<ReturnType<Sharp>["metadata"]>>;
  try {
    meta = await input.metadata();
  } catch (err) {
    throw new Error(`image does not decode: ${(err as Error).message}`);
  }
  if (meta.format && !RASTER_FORMATS.has(meta.format) && meta.format !== "raw")
    throw new Error(`image format ${meta.format} is not accepted`);
  const w = meta.width ?? 0;
  const h = meta.height ?? 0;
  if (Math.min(w, h) < LOW_RES_SIDE)
    throw new Error(`image is ${w}x${h}, under ${LOW_RES_SIDE} px`);
  const { data, info } = await input
    .ensureAlpha()
    .resize(STORED_RASTER_SIDE, STORED_RASTER_SIDE, { fit: "inside", withoutEnlargement: true })
    .png({ compressionLevel: 9 })
    .toBuffer({ resolveWithObject: true });
  const stats = await sharp(data).stats();
  const flat =
    stats.channels.slice(0, 3).every((c) => c.stdev < 1) && (stats.channels[3]?.stdev ?? 0) < 1;
  if (flat) throw new Error("image is a single flat colour");
  const d = stats.dominant;
  return {
    kind: "raster",
    svg: rasterWrapper(data, info.width, info.height),
    width: info.width,
    height: info.height,
    source: { width: w, height: h },
    single: null,
    dominant: dominantColor([rgbToHex([d.r, d.g, d.b])]),
    ...(Math.min(w, h) < MIN_RASTER_SIDE ? { lowRes: true } : {}),
  };
}

/** The SVG that draws a PNG at its pixel size. */
export function rasterWrapper(png: Uint8Array, width: number, height: number): string {
  const data = Buffer.from(png).toString("base64");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"><image width="${width}" height="${height}" href="data:image/png;base64,${data}"/></svg>`;
}

/** StoredSvg.source of a pinned raster mark: "pin:raster:WxH" (discovered: provenance.ts). */
export const rasterSource = (width: number, height: number, tag: string) =>
  `${tag}:raster:${width}x${height}`;

/**
 * The longer pixel side of a raster-backed mark, from its source ("web:raster:WxH",
 * "web:http:raster:WxH", "pin:raster:WxH"); null for real vectors.
 */
export function rasterSide(source: string): number | null {
  const m = /^(?:web:(?:http:)?|pin:)raster:(\d+)x(\d+)$/.exec(source);
  return m ? Math.max(Number(m[1]), Number(m[2])) : null;
}

/** One piece of fetched artwork to process (the worker's message). */
export type ArtworkJob =
  | { kind: "svg"; text: string; idPrefix: string; forceMono: boolean }
  | { kind: "raster"; bytes: Uint8Array };

export type ArtworkReply = { artwork: Artwork } | { error: string };

export function processArtwork(job: ArtworkJob): Promise<Artwork> {
  return job.kind === "svg"
    ? svgArtwork(job.text, job.idPrefix, job.forceMono)
    : rasterArtwork(job.bytes);
}

/** Any job of the background worker: artwork, or an enrichment derivation. */
export type WorkerJob = ArtworkJob | { kind: "enrich"; brand: Brand; now: string };

export async function runWorkerJob(job: WorkerJob): Promise<Artwork | EnrichmentRecord> {
  return job.kind === "enrich"
    ? deriveEnrichment(job.brand, new Date(job.now))
    : processArtwork(job);
}
