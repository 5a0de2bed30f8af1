/**
 * Where a served variant came from, read from its StoredSvg.source tag (the one home of the
 * tags' meaning):
 *
 *   catalog        an icon package of the catalog build ("simple-icons", "iconify:logos", ...)
 *   bimi-verified  the brand's BIMI logo, its mark certificate verified ("web:bimi-vmc:svg")
 *   bimi           the brand's BIMI logo without a verified mark ("web:bimi:svg")
 *   website        the brand's website over https ("web:svg", "web:raster:WxH")
 *   website-http   the brand's website over plain http ("web:http:svg", "web:http:raster:WxH")
 *   pin            an operator's pin ("pin", laid over the brand by src/reports/pins.ts)
 *
 * A variant derived from the mono mark ("derived:mono": dark and light) has the mono mark's
 * provenance.
 */
import type { Brand, StoredSvg, Variant } from "./built-catalog";

export const PROVENANCES = [
  "catalog",
  "bimi-verified",
  "bimi",
  "website",
  "website-http",
  "pin",
] as const;
export type Provenance = (typeof PROVENANCES)[number];

/** The channel discovered artwork came through (its source tag's middle part). */
export type WebChannel = "bimi-verified" | "bimi" | "website" | "website-http";

const CHANNEL_TAG: Record<WebChannel, string> = {
  "bimi-verified": "web:bimi-vmc:",
  bimi: "web:bimi:",
  website: "web:",
  "website-http": "web:http:",
};

/** The source tag of discovered artwork: an SVG, or a raster of width x height pixels. */
export function webSource(channel: WebChannel, raster?: { width: number; height: number }) {
  return `${CHANNEL_TAG[channel]}${raster ? `raster:${raster.width}x${raster.height}` : "svg"}`;
}

/** The provenance of one source tag (derived variants: see provenanceOf). */
function ofSource(source: string): Provenance {
  if (source.startsWith("pin")) return "pin";
  if (source.startsWith("web:bimi-vmc:")) return "bimi-verified";
  if (source.startsWith("web:bimi:")) return "bimi";
  if (source.startsWith("web:http:")) return "website-http";
  if (source.startsWith("web:")) return "website";
  return "catalog";
}

/** Where the brand's `variant` came from, or null when the brand has no such variant. */
export function provenanceOf(b: Pick<Brand, "variants">, variant: Variant): Provenance | null {
  const stored: StoredSvg | undefined = b.variants[variant];
  if (!stored) return null;
  if (stored.source.startsWith("derived")) {
    const mono = b.variants.mono;
    return mono && !mono.source.startsWith("derived") ? ofSource(mono.source) : "catalog";
  }
  return ofSource(stored.source);
}

/** Every stored variant's provenance, in the order of `variants`. */
export function provenances(
  b: Pick<Brand, "variants">,
  variants: readonly Variant[],
): Partial<Record<Variant, Provenance>> {
  const out: Partial<Record<Variant, Provenance>> = {};
  for (const v of variants) {
    const p = provenanceOf(b, v);
    if (p) out[v] = p;
  }
  return out;
}

/** True when some of the brand's artwork was read over plain http (never `verified`). */
export function readOverHttp(b: Pick<Brand, "variants">): boolean {
  for (const v of Object.values(b.variants))
    if (v && ofSource(v.source) === "website-http") return true;
  return false;
}
