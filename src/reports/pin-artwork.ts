/**
 * Artwork an operator pins: an upload (SVG or PNG) or a URL fetched through discovery's guarded
 * fetcher, checked, sanitized and optimized like every mark, with the variants that derive
 * from it; and the URL rules of reports and pins.
 */

import type { Brand, StoredSvg, Variant } from "../catalog/built-catalog";
import { checkUrl, Refused } from "../catalog/discovery/address";
import {
  type Artwork,
  rasterArtwork,
  rasterSource,
  sha256,
  svgArtwork,
} from "../catalog/discovery/artwork";
import { type GuardedFetcher, IMAGE_MAX_BYTES } from "../catalog/discovery/fetcher";
import { deriveEnrichment, recolorMono } from "../catalog/enrichment/service";
import { unusable } from "../platform/domain-errors";
import { PIN_SOURCE } from "./pins";
import type { PinnedArtwork } from "./store/port";

export const URL_MAX = 2048;
/** Largest pinned artwork accepted, uploaded or fetched (discovery's image cap). */
export const PIN_MAX_BYTES = IMAGE_MAX_BYTES;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Markup the sanitizer would strip from an upload: refused outright, never quietly cleaned. */
const ACTIVE_SVG = /<script\b|<foreignObject\b|\son[a-z]+\s*=|javascript:/i;

/** An unusable report or pin (invalid_report, invalid_pin) naming the field at fault. */
export const badInput = (code: string, field: string, message: string) =>
  unusable(code, message, { field });

/** Pinned artwork as sent: the body's bytes (SVG or PNG), a URL to fetch, or a removal. */
export type ArtworkInput =
  | { kind: "svg" | "png"; bytes: Uint8Array }
  | { url: string }
  | { remove: true };

const isPng = (b: Uint8Array) => PNG_SIGNATURE.every((x, i) => b[i] === x);
const looksSvg = (b: Uint8Array) =>
  /^\s*(?:<\?xml|<svg|<!--|<!DOCTYPE svg)/i.test(
    Buffer.from(b.subarray(0, 512))
      .toString("utf8")
      .replace(/^\uFEFF/, ""),
  );

/** A reported URL: https, a DNS name (no IP literal, no local name), ports 443 only. */
export function reportUrl(input: string): string {
  if (input.length > URL_MAX)
    throw badInput("invalid_report", "url", `url is longer than ${URL_MAX} characters.`);
  try {
    const url = checkUrl(input);
    if (url.protocol !== "https:") throw new Refused("the url must be https");
    return url.href;
  } catch (err) {
    throw badInput("invalid_report", "url", `url: ${(err as Error).message}.`);
  }
}

/** The bytes of an upload, or of a URL fetched now through the guarded fetcher. */
export async function artworkBytes(
  input: Exclude<ArtworkInput, { remove: true }>,
  fetcher: GuardedFetcher,
) {
  if (!("url" in input)) {
    if (input.bytes.byteLength > PIN_MAX_BYTES)
      throw badInput("invalid_pin", "body", `Artwork over ${PIN_MAX_BYTES} bytes.`);
    return { bytes: input.bytes, kind: input.kind, origin: "upload" };
  }
  let url: string;
  try {
    // http or https: discovery's fetcher checks every hop
    url = checkUrl(input.url).href;
  } catch (err) {
    throw badInput("invalid_pin", "url", `url: ${(err as Error).message}.`);
  }
  let r: Awaited<ReturnType<GuardedFetcher["get"]>>;
  try {
    r = await fetcher.get(url, {
      maxBytes: PIN_MAX_BYTES,
      deadline: Date.now() + 15_000,
      accept: "image/svg+xml,image/png;q=0.9",
    });
  } catch (err) {
    // refused by the SSRF rules, a failed DNS lookup, connection, size or time cap
    throw badInput("invalid_pin", "url", `The URL cannot be fetched: ${(err as Error).message}`);
  }
  if (r.status !== 200) throw badInput("invalid_pin", "url", `The URL answered HTTP ${r.status}.`);
  const bytes = new Uint8Array(r.body);
  const kind = isPng(bytes) ? "png" : looksSvg(bytes) ? "svg" : null;
  if (!kind) throw badInput("invalid_pin", "url", "The URL gives neither an SVG nor a PNG.");
  return { bytes, kind, origin: r.url } as const;
}

const stored = (svg: string, source: string): StoredSvg => ({ svg, sha256: sha256(svg), source });

/**
 * Sanitized artwork for a pin, with what derives from it as for any mark: a single-colour
 * mark pinned as mono or color gives mono in black and dark/light in the brand's colour where
 * it stays visible (the enrichment rules); multi-colour color artwork serves dark and light as
 * it is. Refused with 400: script-bearing or unparsable SVG, a PNG body that is no PNG.
 */
export async function pinnedArtwork(
  brand: Brand,
  variant: Variant,
  kind: "svg" | "png",
  bytes: Uint8Array,
  origin: string,
): Promise<PinnedArtwork> {
  let art: Artwork;
  if (kind === "png") {
    if (!isPng(bytes)) throw badInput("invalid_pin", "body", "The body is not a PNG image.");
    art = await rasterArtwork(bytes).catch((err: Error) => {
      throw badInput("invalid_pin", "body", `PNG refused: ${err.message}`);
    });
  } else {
    const text = Buffer.from(bytes).toString("utf8");
    if (ACTIVE_SVG.test(text))
      throw badInput(
        "invalid_pin",
        "body",
        "The SVG has script, event handlers or foreignObject; send static artwork.",
      );
    art = await svgArtwork(text, `p${brand.id}`, variant === "mono").catch((err: Error) => {
      throw badInput("invalid_pin", "body", `SVG refused: ${err.message}`);
    });
  }
  const single = art.kind === "svg" && art.single !== null;
  if (variant === "mono" && !single)
    throw badInput("invalid_pin", "body", "A mono pin must be single-colour SVG artwork.");
  // the raster label keeps the PNG routes from drawing it larger than its pixels allow
  const source = art.kind === "svg" ? PIN_SOURCE : rasterSource(art.width, art.height, PIN_SOURCE);
  const black = single ? recolorMono(art.svg, "000000").svg : null;
  const svg = stored(variant === "mono" && black ? black : art.svg, source);
  const derived: Partial<Record<Variant, StoredSvg>> = {};
  const fromPin = `${PIN_SOURCE}:derived`;
  if ((variant === "mono" || variant === "color") && black) {
    const mono = stored(black, fromPin);
    if (variant === "color") derived.mono = mono;
    const r = deriveEnrichment({ ...brand, variants: { mono }, verifiedAt: "-" });
    for (const v of ["dark", "light"] as const) {
      const d = r.variants[v];
      if (d) derived[v] = stored(d.svg, fromPin);
    }
  } else if (variant === "color") {
    derived.dark = svg;
    derived.light = svg;
  }
  return { svg, derived, origin };
}
