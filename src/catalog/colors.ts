/**
 * Colour maths for the catalog (pure functions, shared by the build and the runtime).
 * Hex values are 6 lowercase characters without "#", as stored in the catalog.
 */

export type Rgb = [number, number, number];
export type Hsl = [number, number, number];

/** The dark surface darkModeColor is measured against. */
export const DARK_SURFACE = "121212";
/** Minimum WCAG contrast of darkModeColor against DARK_SURFACE (WCAG AA for text, 4.5:1). */
export const DARK_MODE_MIN_CONTRAST = 4.5;

/** "#ABC", "abc", "#AABBCC", "aabbccff" -> "aabbcc"; null when not a hex colour. */
export function normalizeHex(input: string | null | undefined): string | null {
  if (!input) return null;
  const m = /^#?([0-9a-f]{3,8})$/i.exec(input.trim());
  if (!m?.[1]) return null;
  const h = m[1].toLowerCase();
  if (h.length === 3 || h.length === 4) return h.slice(0, 3).replace(/./g, "$&$&");
  if (h.length === 6 || h.length === 8) return h.slice(0, 6);
  return null;
}

export function hexToRgb(hex: string): Rgb {
  const h = normalizeHex(hex);
  if (!h) throw new Error(`not a hex colour: ${hex}`);
  return [0, 2, 4].map((i) => Number.parseInt(h.slice(i, i + 2), 16)) as Rgb;
}

export function rgbToHex([r, g, b]: Rgb): string {
  const part = (v: number) =>
    Math.round(Math.min(255, Math.max(0, v)))
      .toString(16)
      .padStart(2, "0");
  return part(r) + part(g) + part(b);
}

/** WCAG 2.x relative luminance, 0..1. */
export function relativeLuminance(hex: string): number {
  const linear = (v: number) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const [r, g, b] = hexToRgb(hex);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG contrast ratio between two colours, 1..21. */
export function contrastRatio(a: string, b: string): number {
  const la = relativeLuminance(a);
  const lb = relativeLuminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** RGB 0..255 -> HSL with h in degrees 0..360, s and l in 0..1. */
export function rgbToHsl([r, g, b]: Rgb): Hsl {
  const rn = r / 255;
  const gn = g / 255;
  const bn = b / 255;
  const max = Math.max(rn, gn, bn);
  const min = Math.min(rn, gn, bn);
  const l = (max + min) / 2;
  if (max === min) return [0, 0, l];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  let h: number;
  if (max === rn) h = (gn - bn) / d + (gn < bn ? 6 : 0);
  else if (max === gn) h = (bn - rn) / d + 2;
  else h = (rn - gn) / d + 4;
  return [h * 60, s, l];
}

export function hslToRgb([h, s, l]: Hsl): Rgb {
  if (s === 0) return [l * 255, l * 255, l * 255];
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const hue = (t: number) => {
    let x = t;
    if (x < 0) x += 1;
    if (x > 1) x -= 1;
    if (x < 1 / 6) return p + (q - p) * 6 * x;
    if (x < 1 / 2) return q;
    if (x < 2 / 3) return p + (q - p) * (2 / 3 - x) * 6;
    return p;
  };
  const hn = h / 360;
  return [hue(hn + 1 / 3) * 255, hue(hn) * 255, hue(hn - 1 / 3) * 255];
}

/**
 * A colour of the same hue (and saturation) that reaches `minContrast` against `surface`:
 * the brand colour itself when it already does, white for a grey or black brand colour,
 * otherwise the brand colour lightened in HSL in small steps until it does (white is the
 * limit and always passes against #121212).
 */
export function darkModeColor(
  brandHex: string,
  surface = DARK_SURFACE,
  minContrast = DARK_MODE_MIN_CONTRAST,
): string {
  const hex = normalizeHex(brandHex);
  if (!hex) throw new Error(`not a hex colour: ${brandHex}`);
  if (contrastRatio(hex, surface) >= minContrast) return hex;
  // black, white and grey brands (GitHub, Apple, X, Vercel) reverse to white, as they publish it
  if (isNearGrey(hex)) return "ffffff";
  const [h, s, l] = rgbToHsl(hexToRgb(hex));
  for (let step = 1; step <= 100; step++) {
    const lighter = Math.min(1, l + step * 0.01);
    const candidate = rgbToHex(hslToRgb([h, s, lighter]));
    if (contrastRatio(candidate, surface) >= minContrast) return candidate;
  }
  return "ffffff";
}

/** "000000" or "ffffff", whichever has the higher WCAG contrast with the colour (ties: black). */
export function contrastTextColor(brandHex: string): "000000" | "ffffff" {
  return contrastRatio(brandHex, "000000") >= contrastRatio(brandHex, "ffffff")
    ? "000000"
    : "ffffff";
}

/** True for white, black and greys: channel spread under ~10% (no visible hue). */
export function isNearGrey(hex: string): boolean {
  const [r, g, b] = hexToRgb(hex);
  return Math.max(r, g, b) - Math.min(r, g, b) < 26;
}

/**
 * The dominant colour of a list of colour occurrences (one entry per fill/stroke/stop use):
 * the most frequent chromatic colour; when there is none, the most frequent grey that is not
 * near-white; failing that the most frequent colour. Ties go to the first occurrence.
 */
export function dominantColor(occurrences: string[]): string | null {
  const counts = new Map<string, number>();
  for (const raw of occurrences) {
    const hex = normalizeHex(raw);
    if (hex) counts.set(hex, (counts.get(hex) ?? 0) + 1);
  }
  const best = (keep: (hex: string) => boolean) => {
    let winner: string | null = null;
    let max = 0;
    for (const [hex, n] of counts) {
      if (keep(hex) && n > max) {
        winner = hex;
        max = n;
      }
    }
    return winner;
  };
  return (
    best((hex) => !isNearGrey(hex)) ??
    best((hex) => relativeLuminance(hex) < 0.8) ??
    best(() => true)
  );
}

export interface BrandColors {
  brandColor: string;
  darkModeColor: string;
  contrastTextColor: string;
  colors: { role: string; hex: string; source: string }[];
}

/** All colour fields of a brand from its brand colour and where that colour came from. */
export function deriveBrandColors(brandHex: string, source: string): BrandColors {
  const brand = normalizeHex(brandHex);
  if (!brand) throw new Error(`not a hex colour: ${brandHex}`);
  const dark = darkModeColor(brand);
  const text = contrastTextColor(brand);
  return {
    brandColor: brand,
    darkModeColor: dark,
    contrastTextColor: text,
    colors: [
      { role: "brand", hex: brand, source },
      { role: "dark-mode", hex: dark, source: dark === brand ? source : "derived" },
      { role: "contrast-text", hex: text, source: "derived" },
    ],
  };
}
