/**
 * Contrast of rendered artwork on a background colour, measured on pixels: the alpha-weighted
 * median WCAG contrast ratio between the background and every pixel at least half opaque (its
 * straight, unpremultiplied colour). "The mark reaches 3:1" means at least half of its visible
 * ink contrasts 3:1 or more with the page. Plain TS.
 */
import { hexToRgb } from "../catalog/colors";

/** WCAG contrast the `bg=` option aims for (non-text graphics, WCAG 1.4.11). */
export const MIN_GRAPHIC_CONTRAST = 3;

const linear = (v: number) => {
  const c = v / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
/** sRGB channel value -> linear light, precomputed */
const LINEAR = Float64Array.from({ length: 256 }, (_, i) => linear(i));

const luminance = (r: number, g: number, b: number) =>
  0.2126 * (LINEAR[r] as number) + 0.7152 * (LINEAR[g] as number) + 0.0722 * (LINEAR[b] as number);

/**
 * Median contrast of straight RGBA pixels (`rgba`, 4 bytes each) on `bgHex`; 1 when no pixel is
 * at least half opaque (an empty image contrasts with nothing).
 */
export function medianContrast(rgba: Uint8Array, bgHex: string): number {
  const [br, bg, bb] = hexToRgb(bgHex);
  const lb = luminance(br, bg, bb);
  const samples: [number, number][] = [];
  let total = 0;
  for (let i = 0; i + 3 < rgba.length; i += 4) {
    const a = rgba[i + 3] as number;
    if (a < 128) continue;
    const l = luminance(rgba[i] as number, rgba[i + 1] as number, rgba[i + 2] as number);
    samples.push([(Math.max(l, lb) + 0.05) / (Math.min(l, lb) + 0.05), a]);
    total += a;
  }
  if (!samples.length) return 1;
  samples.sort((x, y) => x[0] - y[0]);
  let acc = 0;
  for (const [ratio, weight] of samples) {
    acc += weight;
    if (acc * 2 >= total) return ratio;
  }
  return (samples[samples.length - 1] as [number, number])[0];
}
