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
import { Resvg } from "@resvg/resvg-js";
import { isNearGrey, rgbToHex } from "../../src/catalog/colors";

export type RenderFlag = "no-colour" | "opaque-background";

const SIZE = 32;

export function renderFlags(svg: string, brandHex: string | null): RenderFlag[] {
  let pixels: Uint8Array;
  let width: number;
  let height: number;
  try {
    const img = new Resvg(svg, { fitTo: { mode: "width", value: SIZE } }).render();
    pixels = img.pixels;
    width = img.width;
    height = img.height;
  } catch {
    return [];
  }
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
