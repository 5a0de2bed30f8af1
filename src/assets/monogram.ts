/**
 * The opt-in lettermark placeholder (`placeholder=monogram` on the asset routes): the
 * brand's initials on a rounded square in its brand colour, for a brand without artwork the
 * caller may get. Served exactly like the generic placeholder (X-Svg-Variant: placeholder,
 * max-age 3600). Plain TS; the markup is built here from escaped initials, never from input.
 */

import type { Brand } from "../catalog/built-catalog";
import { contrastTextColor } from "../catalog/colors";

/** Words that do not give an initial ("Bank of America" -> BA). */
const MINOR = new Set([
  "of",
  "the",
  "and",
  "de",
  "du",
  "des",
  "la",
  "le",
  "der",
  "die",
  "das",
  "y",
  "et",
  "&",
]);

/** Up to two initials, uppercase: first letters of the first two major words, else one. */
export function initials(name: string): string {
  const words = name
    .split(/[\s\-_/.,+]+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+/u, ""))
    .filter((w) => w && !MINOR.has(w.toLowerCase()));
  const letters = words.slice(0, 2).map((w) => [...w][0] as string);
  return (letters.join("") || "?").toUpperCase();
}

/** A stable mid-tone colour from the name, for brands without a brandColor. */
function nameHue(name: string): string {
  let h = 0;
  for (const ch of name) h = (h * 31 + (ch.codePointAt(0) ?? 0)) % 360;
  // hsl(h, 45%, 40%) in hex
  const s = 0.45;
  const l = 0.4;
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255)
      .toString(16)
      .padStart(2, "0");
  };
  return `${f(0)}${f(8)}${f(4)}`;
}

const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.codePointAt(0)};`);

export function monogramSvg(brand: Pick<Brand, "name" | "brandColor">): string {
  const text = initials(brand.name);
  const bg = brand.brandColor ?? nameHue(brand.name);
  const fg = contrastTextColor(bg);
  const size = text.length > 1 ? 10 : 13;
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" role="img">' +
    `<title>${escapeXml(brand.name)}</title>` +
    `<rect width="24" height="24" rx="5" fill="#${bg}"/>` +
    `<text x="12" y="12" dy="0.35em" text-anchor="middle" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-weight="700" font-size="${size}" fill="#${fg}">${escapeXml(text)}</text>` +
    "</svg>"
  );
}
