/**
 * The provenance of a brand's stored artwork (Brand.artwork): per source its package, licence
 * and upstream URL, and the variants drawn from it. thesvg licenses each icon on its own, so
 * its entry names that icon's licence and file.
 */
import { type ArtworkSource, type Brand, VARIANTS } from "../../src/catalog/built-catalog";
import { baseSource } from "./attribution";
import { PER_ICON, SOURCE_LICENCES } from "./sources";
import { THESVG_PACKAGE, THESVG_SOURCE, type TheSvgIcon } from "./thesvg";

/** The published file an icon was read from. */
export const theSvgFileUrl = (version: string, slug: string) =>
  `https://unpkg.com/${THESVG_PACKAGE}@${version}/dist/${slug}.js`;

export function artworkProvenance(
  brand: Pick<Brand, "slug" | "variants">,
  thesvg: { icon: TheSvgIcon; version: string } | undefined,
): ArtworkSource[] {
  const bySource = new Map<string, ArtworkSource>();
  for (const variant of VARIANTS) {
    const stored = brand.variants[variant];
    if (!stored) continue;
    const source = baseSource(stored.source);
    let entry = bySource.get(source);
    if (!entry) {
      const l = SOURCE_LICENCES[source];
      if (!l) throw new Error(`no licence recorded for source ${source} (${brand.slug})`);
      const perIcon = l.licence === PER_ICON;
      if (perIcon && (source !== THESVG_SOURCE || !thesvg)) {
        throw new Error(`no icon licence for ${source} artwork of ${brand.slug}`);
      }
      entry = {
        source,
        package: l.package,
        licence: perIcon && thesvg ? thesvg.icon.licence : l.licence,
        url: perIcon && thesvg ? theSvgFileUrl(thesvg.version, thesvg.icon.slug) : l.url,
        variants: [],
      };
      bySource.set(source, entry);
    }
    entry.variants.push(variant);
  }
  return [...bySource.values()];
}
