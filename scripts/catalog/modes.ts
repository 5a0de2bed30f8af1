/**
 * Recolouring a single-colour mark: the brand-colour `color` mark and the plain white/black
 * `dark`/`light` marks of the variant rules (variant-rules.ts) are the mono mark recoloured.
 * Their source is "recolored:<mono source>", never "derived...", which the runtime enrichment
 * reserves for its own output (a brand with both variants is left alone).
 */

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
