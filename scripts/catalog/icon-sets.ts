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
import { foldIconName } from "./folds";
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
  /** icon names folded into the brand they draw, by kind (folds.ts) */
  folded: Record<string, number>;
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
  curatedDomains: ReadonlyMap<string, string> = new Map(),
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
  /** icons folded into the brand they draw, by kind (folds.ts) */
  const folded: Record<string, number> = {};
  for (const setId of ICONIFY_SETS) {
    const { set, titles } = loadSet(root, setId);
    const decided = new Set<string>();
    const parse = (n: string) => parseIconName(setId, n);
    /** the icons of the set that draw brands */
    const taken = ({ mods }: { mods: Set<string> }) =>
      // streamline's plain "logo" style is a line drawing of the mark: only solid/block count
      (setId !== "streamline-logos" || mods.has("solid") || mods.has("block")) &&
      // tabler: only its brand icons ("brand-walmart"), not its thousands of UI icons
      (setId !== "tabler" || mods.has("brand"));
    const bases = new Set(
      Object.keys(set.icons)
        .map(parse)
        .filter(taken)
        .map((p) => p.base),
    );
    /** the name's base and modifiers, a variant of another brand's mark folded (folds.ts) */
    const resolve = (n: string) => {
      const { base, mods } = parse(n);
      const fold = SYNONYMS[compactKey(base)] ? null : foldIconName(setId, base, bases);
      if (fold) mods.add(fold.mod);
      return { named: base, base: fold?.base ?? base, mods, fold };
    };
    // plain names first: a folded variant joins the brand its base names, never creates one
    const names = [
      ...Object.keys(set.icons).map((n) => ({ n, alias: false })),
      ...Object.keys(set.aliases ?? {}).map((n) => ({ n, alias: true })),
    ]
      .map((x) => ({ ...x, ...resolve(x.n) }))
      .sort((a, b) => Number(a.fold !== null) - Number(b.fold !== null));
    let matched = 0;
    let added = 0;
    for (const { n, alias, named, base, mods, fold } of names) {
      const icon = resolveIcon(set, n);
      if (!icon || icon.hidden || !taken({ mods })) continue;
      if (alias) {
        // an alias only adds a variant to the brand of its own parent (e.g. devicon's
        // "amazonwebservices-wordmark"); typo aliases like "leafjet" never create brands
        const parent = set.aliases?.[n]?.parent ?? "";
        if (resolve(parent).base !== base) continue;
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
      if (!brand && fold) {
        if (!decided.has(named)) {
          decided.add(named);
          decisions.push(
            `${sourceOf(setId)} ${named} -> left out: ${fold.kind} of ${base}, which no brand has`,
          );
        }
        continue;
      }
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
      if (!decided.has(named)) {
        decided.add(named);
        if (fold) folded[fold.kind] = (folded[fold.kind] ?? 0) + 1;
        decisions.push(
          fold
            ? `${sourceOf(setId)} ${named} -> folded into ${brand.slug} (${brand.name}, ${fold.kind})`
            : `${sourceOf(setId)} ${base} -> ${isNew ? "new brand" : "merged into"} ${brand.slug}` +
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
  const t = mergeTheSvg(brands, thesvg.icons, index, iconifyOnly, directory, curatedDomains);
  decisions.push(...t.decisions);
  Object.assign(stats, {
    thesvgIcons: thesvg.total,
    thesvgKept: thesvg.icons.length,
    thesvgByDomain: t.byDomain,
    thesvgByName: t.byName,
    thesvgByDrawingOrCurated: t.byDrawingOrCurated,
    thesvgClashes: t.clashes,
    thesvgDuplicates: t.duplicates,
    thesvgNewBrands: t.added,
  });
  return { brands, stats, decisions, folded, thesvgExcluded: thesvg.excluded };
}
