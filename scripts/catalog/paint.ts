/**
 * Facts about a mark measured on its rendered pixels (resvg), not on its declared fills:
 * how much of its painted area reaches the graphics contrast floor on the dark and the light
 * surface, and which hues it paints. Used by the variant rules (variant-rules.ts), the review
 * sheet and the artwork figures.
 */
import { type RenderedImage, renderAsync } from "@resvg/resvg-js";
import { squareFrame } from "../../src/assets/render";
import { DARK_SURFACE, rgbToHsl } from "../../src/catalog/colors";

export const LIGHT_SURFACE = "ffffff";
export { DARK_SURFACE };
/** WCAG 2.x 1.4.11 non-text contrast: the floor for graphics (logos are exempt from 4.5:1). */
export const GRAPHIC_MIN_CONTRAST = 3;
/** A full-colour mark stays on a surface when this share of its painted area reaches the floor. */
export const MIN_VISIBLE_SHARE = 2 / 3;
/** Hue bins are this many degrees wide. */
export const HUE_BIN = 10;
/** The longer side, in pixels, marks are measured at. */
export const MEASURE_SIZE = 64;

export interface PaintFacts {
  /** share of the painted area (alpha-weighted) reaching 3:1 against #121212 */
  dark: number;
  /** the same against #ffffff */
  light: number;
  /** hue bins (HUE_BIN degrees) holding at least 1% of the chromatic painted area */
  hues: number[];
  /** mean WCAG contrast of the painted area against each surface */
  darkContrast: number;
  lightContrast: number;
  /** every fully opaque pixel has the same colour (within 6 per channel): a single-colour mark */
  solid: boolean;
  /**
   * The mark's silhouette: its painted bounds' aspect ratio and a SHAPE_GRID x SHAPE_GRID grid
   * over those bounds, "1" where the cell's centre is painted (compare with shapeOverlap)
   */
  shape: { aspect: number; cells: string };
}

export const SHAPE_GRID = 12;

/** The silhouette of premultiplied RGBA pixels (see PaintFacts.shape). */
export function shapeOf(
  pixels: Uint8Array | Buffer,
  width: number,
  height: number,
): PaintFacts["shape"] {
  const painted = (x: number, y: number) => (pixels[(y * width + x) * 4 + 3] as number) >= 128;
  let x0 = width;
  let y0 = height;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (painted(x, y)) {
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
  if (x1 < 0) return { aspect: 1, cells: "" };
  const w = x1 - x0 + 1;
  const h = y1 - y0 + 1;
  let cells = "";
  for (let j = 0; j < SHAPE_GRID; j++)
    for (let i = 0; i < SHAPE_GRID; i++) {
      const x = x0 + Math.floor(((i + 0.5) * w) / SHAPE_GRID);
      const y = y0 + Math.floor(((j + 0.5) * h) / SHAPE_GRID);
      cells += painted(x, y) ? "1" : "0";
    }
  return { aspect: w / h, cells };
}

/**
 * How alike two silhouettes are, 0..1: the overlap (intersection over union) of their grids,
 * times the ratio of their aspect ratios (a stacked lockup is not its square symbol).
 */
export function shapeOverlap(a: PaintFacts["shape"], b: PaintFacts["shape"]): number {
  let both = 0;
  let either = 0;
  for (let i = 0; i < a.cells.length; i++) {
    const pa = a.cells[i] === "1";
    const pb = b.cells[i] === "1";
    if (pa && pb) both++;
    if (pa || pb) either++;
  }
  const iou = either ? both / either : 0;
  return iou * (Math.min(a.aspect, b.aspect) / Math.max(a.aspect, b.aspect));
}

const LINEAR = Array.from({ length: 256 }, (_, v) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

const luminance = (r: number, g: number, b: number) =>
  0.2126 * (LINEAR[r] as number) + 0.7152 * (LINEAR[g] as number) + 0.0722 * (LINEAR[b] as number);

function surfaceLuminance(hex: string): number {
  const n = Number.parseInt(hex, 16);
  return luminance((n >> 16) & 255, (n >> 8) & 255, n & 255);
}

const ratio = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/** A pixel counts as chromatic when its channels spread this much (isNearGrey's bar). */
const CHROMA = 26;

/** Facts of premultiplied RGBA pixels (resvg's output), `width` pixels wide. */
export function paintFactsOf(pixels: Uint8Array | Buffer, width: number): PaintFacts {
  const darkL = surfaceLuminance(DARK_SURFACE);
  const lightL = surfaceLuminance(LIGHT_SURFACE);
  let painted = 0;
  let darkPass = 0;
  let lightPass = 0;
  let darkSum = 0;
  let lightSum = 0;
  let chromatic = 0;
  const bins = new Map<number, number>();
  let first = -1;
  let solid = true;
  for (let i = 0; i < pixels.length; i += 4) {
    const a = pixels[i + 3] as number;
    if (a === 0) continue;
    const un = (v: number) => Math.min(255, Math.round((v * 255) / a));
    const r = un(pixels[i] as number);
    const g = un(pixels[i + 1] as number);
    const b = un(pixels[i + 2] as number);
    const w = a / 255;
    if (a === 255 && solid) {
      if (first < 0) first = (r << 16) | (g << 8) | b;
      else
        solid =
          Math.abs(((first >> 16) & 255) - r) <= 6 &&
          Math.abs(((first >> 8) & 255) - g) <= 6 &&
          Math.abs((first & 255) - b) <= 6;
    }
    const l = luminance(r, g, b);
    const onDark = ratio(l, darkL);
    const onLight = ratio(l, lightL);
    painted += w;
    darkSum += w * onDark;
    lightSum += w * onLight;
    if (onDark >= GRAPHIC_MIN_CONTRAST) darkPass += w;
    if (onLight >= GRAPHIC_MIN_CONTRAST) lightPass += w;
    if (a >= 128 && Math.max(r, g, b) - Math.min(r, g, b) >= CHROMA) {
      const bin = Math.floor(rgbToHsl([r, g, b])[0] / HUE_BIN) % (360 / HUE_BIN);
      bins.set(bin, (bins.get(bin) ?? 0) + w);
      chromatic += w;
    }
  }
  const share = (n: number) => (painted ? n / painted : 0);
  return {
    dark: share(darkPass),
    light: share(lightPass),
    darkContrast: share(darkSum),
    lightContrast: share(lightSum),
    solid: solid && first >= 0,
    shape: shapeOf(pixels, width, pixels.length / 4 / width),
    hues: [...bins]
      .filter(([, n]) => n >= chromatic * 0.01)
      .map(([bin]) => bin)
      .sort((x, y) => x - y),
  };
}

/** The hue bin of a colour, or null for greys, black and white. */
export function hueBin(hex: string): number | null {
  const n = Number.parseInt(hex, 16);
  const rgb: [number, number, number] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  if (Math.max(...rgb) - Math.min(...rgb) < CHROMA) return null;
  return Math.floor(rgbToHsl(rgb)[0] / HUE_BIN) % (360 / HUE_BIN);
}

/** Hue bins of `hues` farther than one bin (10-20 degrees) from every bin of `palette`. */
export function foreignHues(hues: number[], palette: Iterable<number>): number[] {
  const bins = 360 / HUE_BIN;
  const near = new Set<number>();
  for (const p of palette) for (const d of [-1, 0, 1]) near.add((p + d + bins) % bins);
  return hues.filter((h) => !near.has(h));
}

/**
 * Options for a measuring render: `size` px wide; no system fonts (loading them costs more
 * than the render; marks are paths, text is rare).
 */
export function measureOptions(size = MEASURE_SIZE) {
  return { fitTo: { mode: "width" as const, value: size }, font: { loadSystemFonts: false } };
}

/**
 * Renders many SVGs on libuv's thread pool (resvg's renderAsync, at most 8 in flight) and maps
 * each image with `fn`; a mark that fails to render maps to null. `square` (default) frames
 * each mark square first, so its longer side is `size` px; otherwise its width is.
 */
export async function mapRendered<T>(
  svgs: string[],
  fn: (img: RenderedImage, index: number) => T,
  { size = MEASURE_SIZE, square = true } = {},
): Promise<(T | null)[]> {
  const out: (T | null)[] = new Array(svgs.length).fill(null);
  let next = 0;
  const lane = async () => {
    while (next < svgs.length) {
      const i = next++;
      const svg = svgs[i] as string;
      try {
        const framed = square ? (squareFrame(svg) ?? svg) : svg;
        out[i] = fn(await renderAsync(framed, measureOptions(size)), i);
      } catch {
        out[i] = null;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return out;
}

/** Paint facts of many SVGs (null where one fails to render). */
export function paintFactsAll(svgs: string[]): Promise<(PaintFacts | null)[]> {
  return mapRendered(svgs, (img) => paintFactsOf(img.pixels, img.width));
}
