/**
 * Build check of the colour artwork: every colour variant is rendered small with
 * resvg and flagged when it
 *  - lost all colour: no chromatic pixel although the brand colour is chromatic (a gradient
 *    dropped on the way, or a source that draws the mark in black: Instagram's logos icon);
 *  - gained an opaque full-canvas background: the four corners are opaque and of one colour
 *    (a mark drawn on a square: Netflix's logos icon).
 * Flags go to the build report; the chooser (variant-choice.ts) avoids such artwork where the
 * brand has other artwork.
 */
import { type RenderedImage, Resvg } from "@resvg/resvg-js";
import { isNearGrey, rgbToHex } from "../../src/catalog/colors";
import { mapRendered, measureOptions } from "./paint";

export type RenderFlag = "no-colour" | "opaque-background";

const SIZE = 32;

export function renderFlags(svg: string, brandHex: string | null): RenderFlag[] {
  let img: RenderedImage;
  try {
    img = new Resvg(svg, measureOptions(SIZE)).render();
  } catch {
    return [];
  }
  return flagsOf(img, brandHex);
}

/** renderFlags for many SVGs at once, rendered on libuv's thread pool (paint.ts mapRendered). */
export async function renderFlagsAll(
  items: { svg: string; brandHex: string | null }[],
): Promise<RenderFlag[][]> {
  const flags = await mapRendered(
    items.map((item) => item.svg),
    (img, i) => flagsOf(img, items[i]?.brandHex ?? null),
    { size: SIZE, square: false },
  );
  return flags.map((f) => f ?? []);
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
