/**
 * Build step 2, merge: the data packages merged into draft brands (scripts/catalog/merge.ts),
 * then the curated display names and aliases applied.
 */
import { applyAliasOverrides } from "../aliases";
import { type DraftBrand, loadAndMerge, type MergeResult } from "../merge";
import type { Fixtures } from "./load";

/**
 * fixtures/name-overrides.json: display names in brand casing; the data's name stays an alias.
 * Throws on a slug no draft has.
 */
export function applyNameOverrides(drafts: DraftBrand[], names: Record<string, string>): void {
  for (const [slug, name] of Object.entries(names)) {
    if (slug.startsWith("$")) continue;
    const draft = drafts.find((d) => d.slug === slug);
    if (!draft) throw new Error(`name override for unknown slug ${slug}`);
    if (draft.name === name) continue;
    if (draft.name.toLowerCase() !== name.toLowerCase() && !draft.aliases.includes(draft.name)) {
      draft.aliases.push(draft.name);
    }
    draft.name = name;
  }
}

export interface Merged extends MergeResult {
  /** how many curated aliases were applied */
  aliasCount: number;
}

export function mergeSources(root: string, fixtures: Fixtures): Merged {
  const merged = loadAndMerge(root);
  applyNameOverrides(merged.brands, fixtures.names);
  const aliasCount = applyAliasOverrides(merged.brands, fixtures.aliases);
  return { ...merged, aliasCount };
}

/** The merge phase's progress line: brands per source. */
export function mergeSummary({ brands, stats }: MergeResult): string {
  return (
    `${brands.length} brands: ${stats.simpleIcons} simple-icons, +${stats.logosNewBrands} logos, ` +
    `+${stats.deviconNewBrands} devicon, +${stats["skill-iconsNewBrands"]} skill-icons, ` +
    `+${stats.lobehubNewBrands} lobehub, +${stats.cibNewBrands} cib, +${stats["fa6-brandsNewBrands"]} fa6-brands, ` +
    `+${stats.bxlNewBrands} bxl, +${stats["streamline-logosNewBrands"]} streamline-logos, +${stats.tablerNewBrands} tabler only`
  );
}
