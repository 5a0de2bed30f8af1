/**
 * Build-time `dark` and `light` variants for every brand (issue 19).
 *
 * - A brand with a single-colour mark (its mono mark) gets it recoloured: dark in the brand's
 *   darkModeColor (at least 4.5:1 on #121212; grey and black brands become white, as brands
 *   publish their reversed logos), light in the brand colour when that reaches 4.5:1 on white,
 *   else the brand colour darkened until it does (black at the limit).
 * - A source's own reversed artwork wins where one exists (logos' "-dark" marks are drawn for
 *   dark backgrounds, skill-icons' "-dark"/"-light" tiles).
 * - A brand with only multi-colour artwork uses that artwork for both (its colours are its
 *   identity; the contrast bar applies to single-colour marks).
 *
 * The source is "recolored:<mono source>" / "artwork:<source>", never "derived...", which the
 * runtime enrichment reserves for its own output (a brand with both variants is left alone).
 */
import { contrastRatio, hexToRgb, hslToRgb, rgbToHex, rgbToHsl } from "../../src/catalog/colors";

export const MIN_CONTRAST = 4.5;

/** The brand colour darkened in HSL until it reaches 4.5:1 on white (black at the limit). */
export function lightModeColor(hex: string): string {
  if (contrastRatio(hex, "ffffff") >= MIN_CONTRAST) return hex;
  const [h, s, l] = rgbToHsl(hexToRgb(hex));
  for (let step = 1; step <= 100; step++) {
    const c = rgbToHex(hslToRgb([h, s, Math.max(0, l - step * 0.01)]));
    if (contrastRatio(c, "ffffff") >= MIN_CONTRAST) return c;
  }
  return "000000";
}

const PAINT_ATTR = /\s(fill|stroke)="(?!none"|transparent"|url\()[^"]*"/g;
const PAINT_STYLE = /(^|;|")\s*(fill|stroke)\s*:\s*(?!none|transparent|url\()[^;"]+/gi;

/**
 * A single-colour mark in one colour: every fill/stroke paint (not none, not url()) and the
 * root's fill become `hex`. Input is the stored, sanitized and optimized SVG.
 */
export function recolor(svg: string, hex: string): string {
  let out = svg.replace(PAINT_ATTR, (_m, attr) => ` ${attr}="#${hex}"`);
  out = out.replace(/style="[^"]*"/g, (s) => s.replace(PAINT_STYLE, `$1$2:#${hex}`));
  return out.replace(/^<svg\b([^>]*)>/, (_m, attrs: string) =>
    / fill="/.test(attrs) ? `<svg${attrs}>` : `<svg${attrs} fill="#${hex}">`,
  );
}
