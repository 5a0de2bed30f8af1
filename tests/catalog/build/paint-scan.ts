/**
 * Every colour an SVG paints with other than black or none (regex based on purpose: it must
 * not share code with the mono derivation it checks). Empty for a clean mono mark.
 */
const PAINT =
  /(?:^|[\s;"'{])(fill|stroke|stop-color|flood-color|lighting-color|color)\s*(?:=\s*["']([^"']*)["']|:\s*([^;"'}]+))/gi;
const BLACK_OR_NONE = /^(?:#000|#000000|black|none|transparent)$/i;

export function nonBlackPaint(svg: string): string[] {
  const found: string[] = [];
  for (const m of svg.matchAll(PAINT)) {
    const value = (m[2] ?? m[3] ?? "").trim();
    if (!BLACK_OR_NONE.test(value)) found.push(`${m[1]}=${value}`);
  }
  if (/<(?:linear|radial)Gradient|<stop\b/i.test(svg)) found.push("gradient");
  return found;
}
