/**
 * Build check of the colour artwork (issue 19): every colour variant is rendered small with
 * resvg and flagged when it
 *  - lost all colour: no chromatic pixel although the brand colour is chromatic (a gradient
 *    dropped on the way, or a source that draws the mark in black: Instagram's logos icon);
 *  - gained an opaque full-canvas background: the four corners are opaque and of one colour
 *    (a mark drawn on a square: Netflix's logos icon).
 * Flags go to the build report; the chooser (variants.ts) avoids such artwork where the
 * brand has other artwork.
 */
import { type RenderedImage, Resvg, renderAsync } from "@resvg/resvg-js";
import { isNearGrey, rgbToHex } from "../../src/catalog/colors";

export type RenderFlag = "no-colour" | "opaque-background";

const SIZE = 32;

// no system fonts: loading them costs more than the render (marks are paths; text is rare)
const OPTIONS = {
  fitTo: { mode: "width" as const, value: SIZE },
  font: { loadSystemFonts: false },
};

export function renderFlags(svg: string, brandHex: string | null): RenderFlag[] {
  let img: RenderedImage;
  try {
    img = new Resvg(svg, OPTIONS).render();
  } catch {
    return [];
  }
  return flagsOf(img, brandHex);
}

/**
 * renderFlags for many SVGs at once: resvg's renderAsync renders on libuv's thread pool, so
 * both cores work (at most `concurrency` renders in flight).
 */
export async function renderFlagsAll(
  items: { svg: string; brandHex: string | null }[],
  concurrency = 8,
): Promise<RenderFlag[][]> {
  const out: RenderFlag[][] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i] as { svg: string; brandHex: string | null };
      try {
        out[i] = flagsOf(await renderAsync(item.svg, OPTIONS), item.brandHex);
      } catch {
        out[i] = [];
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return out;
}

function flagsOf(img: RenderedImage, brandHex: string | null): RenderFlag[] {
  const pixels = img.pixels;
  const width = img.width;
  const height = img.height;
  const flags: RenderFlag[] = [];
  const at = (x: number, y: number) => {
    const i = (y * width + x) * 4;
    return [pixels[i] ?? 0, pixels[i + 1] ?? 0, pixels[i + 2] ?? 0, pixels[i + 3] ?? 0];
  };
  const corners = [at(0, 0), at(width - 1, 0), at(0, height - 1), at(width - 1, height - 1)];
  const hex = (p: number[]) => rgbToHex([p[0] ?? 0, p[1] ?? 0, p[2] ?? 0]);
  if (corners.every((p) => (p[3] ?? 0) >= 250) && new Set(corners.map(hex)).size === 1) {
    flags.push("opaque-background");
  }
  if (brandHex && !isNearGrey(brandHex)) {
    let chromatic = false;
    for (let i = 0; i < pixels.length && !chromatic; i += 4) {
      if ((pixels[i + 3] ?? 0) < 128) continue;
      const r = pixels[i] ?? 0;
      const g = pixels[i + 1] ?? 0;
      const b = pixels[i + 2] ?? 0;
      if (Math.max(r, g, b) - Math.min(r, g, b) >= 26) chromatic = true;
    }
    if (!chromatic) flags.push("no-colour");
  }
  return flags;
}
