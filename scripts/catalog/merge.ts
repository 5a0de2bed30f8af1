/**
 * Loading the data sets and merging them into draft brands.
 *
 * simple-icons is the backbone (slug, title, hex, mono mark, URLs, aliases). Every iconify icon
 * name is split into a base name and modifiers ("slack-icon" -> slack + icon), the base is
 * matched to a simple-icons brand by slug, slugified title, compact title or "aka" alias, in
 * that order and only on exact, unambiguous keys (so "meta" never matches "metabase"). Bases
 * that match nothing become iconify-only brands, shared between the iconify sets by key.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DraftBrand } from "./draft";
import { resolveIcon } from "./iconify";
import { compactKey, siSlugify, TieredIndex } from "./keys";
import { ACRONYMS, DISPLAY_NAMES, SYNONYMS } from "./names";
import { ICONIFY_SETS, loadSet, parseIconName, type SetId, sourceOf } from "./sources";
import { loadTheSvg } from "./thesvg";
import { type Directory, mergeTheSvg } from "./thesvg-merge";

export type { DraftBrand, IconCandidate } from "./draft";
export { ICONIFY_SETS, parseIconName, type SetId };

interface SiIcon {
  title: string;
  slug: string;
  hex: string;
  source: string;
  guidelines?: string;
  aliases?: {
    aka?: string[];
    old?: string[];
    dup?: { title: string; hex?: string; source?: string; guidelines?: string }[];
    loc?: Record<string, string>;
  };
}

/** "aws-api-gateway" -> "AWS API Gateway" */
function titleize(base: string): string {
  return base
    .split("-")
    .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(" ");
}

export interface MergeResult {
  brands: DraftBrand[];
  stats: Record<string, number>;
  /** one line per iconify base name and set: the brand it merged into, or "new" */
  decisions: string[];
  /** @thesvg/icons icons left out, by reason */
  thesvgExcluded: Record<string, number>;
}

/**
 * `directory`: name-suggestion-index companies by directory slug with their registrable
 * domains, so that a new thesvg brand never takes the slug of another company.
 */
export function loadAndMerge(
  root: string,
  directory: Directory = { slugs: new Map(), byDomain: new Map() },
): MergeResult {
  const siDir = join(root, "node_modules", "simple-icons");
  const siData: SiIcon[] = JSON.parse(
    readFileSync(join(siDir, "data", "simple-icons.json"), "utf8"),
  );
  const brands: DraftBrand[] = [];
  const index = new TieredIndex<DraftBrand>();
  const bySlug = new Map<string, DraftBrand>();

  for (const si of siData) {
    const a = si.aliases ?? {};
    const aliases = [
      ...(a.aka ?? []),
      ...(a.dup ?? []).map((d) => d.title),
      ...Object.values(a.loc ?? {}),
      ...(a.old ?? []),
    ];
    const brand: DraftBrand = {
      key: si.slug,
      slug: si.slug,
      name: si.title,
      aliases: [...new Set(aliases)].filter((x) => x !== si.title),
      hex: si.hex.toLowerCase(),
      sourceUrl: si.source ?? null,
      guidelinesUrl: si.guidelines ?? null,
      extraUrls: (a.dup ?? []).flatMap((d) => [d.source, d.guidelines]).filter(Boolean) as string[],
      keys: new Set([si.slug.replace(/_/g, ""), siSlugify(si.title), compactKey(si.title)]),
      primaryKeys: new Set([si.slug.replace(/_/g, ""), siSlugify(si.title), compactKey(si.title)]),
      sources: new Set(["simple-icons"]),
      siSvg: readFileSync(join(siDir, "icons", `${si.slug}.svg`), "utf8"),
      candidates: [],
    };
    for (const aka of a.aka ?? []) brand.keys.add(compactKey(aka));
    brands.push(brand);
    bySlug.set(si.slug, brand);
    index.add(0, si.slug, brand);
    index.add(1, siSlugify(si.title), brand);
    index.add(2, compactKey(si.title), brand);
    for (const aka of a.aka ?? []) index.add(3, compactKey(aka), brand);
  }

  const stats: Record<string, number> = { simpleIcons: brands.length };
  const iconifyOnly = new Map<string, DraftBrand>();
  const decisions: string[] = [];
  for (const setId of ICONIFY_SETS) {
    const { set, titles } = loadSet(root, setId);
    const decided = new Set<string>();
    const names = [
      ...Object.keys(set.icons).map((n) => ({ n, alias: false })),
      ...Object.keys(set.aliases ?? {}).map((n) => ({ n, alias: true })),
    ];
    let matched = 0;
    let added = 0;
    for (const { n, alias } of names) {
      const icon = resolveIcon(set, n);
      if (!icon || icon.hidden) continue;
      const { base, mods } = parseIconName(setId, n);
      // streamline's plain "logo" style is a line drawing of the mark: only solid/block count
      if (setId === "streamline-logos" && !mods.has("solid") && !mods.has("block")) continue;
      // tabler: only its brand icons ("brand-walmart"), not its thousands of UI icons
      if (setId === "tabler" && !mods.has("brand")) continue;
      if (alias) {
        // an alias only adds a variant to the brand of its own parent (e.g. devicon's
        // "amazonwebservices-wordmark"); typo aliases like "leafjet" never create brands
        const parent = set.aliases?.[n]?.parent ?? "";
        if (parseIconName(setId, parent).base !== base) continue;
      }
      const compact = compactKey(base);
      const key = SYNONYMS[compact] ?? compact;
      const title = titles.get(n);
      const titleKey = title ? compactKey(title) : "";
      let brand =
        index.find(key) ??
        iconifyOnly.get(key) ??
        (titleKey ? (index.find(titleKey) ?? iconifyOnly.get(titleKey)) : undefined);
      if (brand?.sources.has("simple-icons")) matched++;
      const isNew = !brand;
      if (!brand) {
        if (alias) continue;
        brand = {
          key,
          slug: key,
          name: DISPLAY_NAMES[key] ?? (title && titleKey === key ? title : titleize(base)),
          aliases: [],
          hex: null,
          sourceUrl: null,
          guidelinesUrl: null,
          extraUrls: [],
          keys: new Set([key, compact]),
          primaryKeys: new Set([key]),
          sources: new Set(),
          siSvg: null,
          candidates: [],
          iconifyBase: base,
        };
        iconifyOnly.set(key, brand);
        brands.push(brand);
        added++;
      }
      if (!decided.has(base)) {
        decided.add(base);
        decisions.push(
          `${sourceOf(setId)} ${base} -> ${isNew ? "new brand" : "merged into"} ${brand.slug}` +
            (isNew
              ? ""
              : ` (${brand.name}, by ${brand.primaryKeys.has(compact) ? "name" : "alias/synonym"})`),
        );
      }
      brand.sources.add(sourceOf(setId));
      brand.candidates.push({
        set: setId,
        icon,
        mods,
        alias,
        direct: brand.primaryKeys.has(compact),
      });
    }
    stats[`${setId}Names`] = names.length;
    stats[`${setId}MatchedSimpleIcons`] = matched;
    stats[`${setId}NewBrands`] = added;
  }
  // @thesvg/icons last: its icons join brands by domain, then name (thesvg-merge.ts)
  const thesvg = loadTheSvg(root);
  const t = mergeTheSvg(brands, thesvg.icons, index, iconifyOnly, directory);
  decisions.push(...t.decisions);
  Object.assign(stats, {
    thesvgIcons: thesvg.total,
    thesvgKept: thesvg.icons.length,
    thesvgByDomain: t.byDomain,
    thesvgByName: t.byName,
    thesvgClashes: t.clashes,
    thesvgDuplicates: t.duplicates,
    thesvgNewBrands: t.added,
  });
  return { brands, stats, decisions, thesvgExcluded: thesvg.excluded };
}
