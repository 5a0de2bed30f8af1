import { createHash } from "node:crypto";
import sharp from "sharp";
import type { Brand, Variant } from "../../src/catalog/built-catalog";
import type { TestApp } from "../support/app";

export const sha256 = (bytes: Uint8Array | string) =>
  createHash("sha256").update(bytes).digest("hex");

/** The first brand (in id order) that satisfies `pred`; fails the test when there is none. */
export function findBrand(t: TestApp, pred: (b: Brand) => boolean, what: string): Brand {
  let b: Brand | undefined;
  for (const brand of t.deps.catalog.each())
    if (pred(brand)) {
      b = brand;
      break;
    }
  if (!b) throw new Error(`the catalog has no brand with ${what}`);
  return b;
}

export const has = (b: Brand, ...vs: Variant[]) => vs.every((v) => b.variants[v]);
export const lacks = (b: Brand, ...vs: Variant[]) => vs.every((v) => !b.variants[v]);

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function isWebp(bytes: Uint8Array): boolean {
  const text = new TextDecoder("latin1").decode(bytes.subarray(0, 12));
  return text.startsWith("RIFF") && text.slice(8, 12) === "WEBP";
}

/** Bounding box of pixels with alpha > 0, decoded independently with sharp. */
export async function opaqueBox(bytes: Uint8Array) {
  const { data, info } = await sharp(bytes)
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  let minX = info.width;
  let minY = info.height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < info.width; x++) {
      if ((data[(y * info.width + x) * 4 + 3] ?? 0) === 0) continue;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
  return { width: info.width, height: info.height, minX, minY, maxX, maxY };
}

/** Aspect ratio (width / height) of an SVG's viewBox. */
export function viewBoxAspect(svg: string): number {
  const m = /viewBox="([^"]+)"/.exec(svg);
  const [, , w, h] = (m?.[1] ?? "").split(/[\s,]+/).map(Number);
  return (w ?? Number.NaN) / (h ?? Number.NaN);
}
