/**
 * Build step 2, merge: the data packages merged into draft brands (scripts/catalog/icon-sets.ts),
 * then the curated display names and aliases applied.
 */

import { registrableDomain } from "../../../src/catalog/brand/domain";
import { applyAliasOverrides } from "../aliases";
import { type DraftBrand, loadAndMerge, type MergeResult } from "../icon-sets";
import { type Candidate, directorySlug, loadCandidates } from "../nsi";
import { loadRedirects } from "../redirects";
import type { Directory } from "../thesvg-merge";
import { importWeb3, type Web3Import } from "../web3icons-merge";
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
  /** the name-suggestion-index companies (read once; the enrich step builds the directory) */
  candidates: Candidate[];
  /** the @web3icons/core import (scripts/catalog/web3icons-merge.ts) */
  web3?: Web3Import;
}

/**
 * The name-suggestion-index companies as the thesvg merge needs them: directory slug ->
 * registrable domains of the company that would get it, and registrable domain -> the slug a
 * company with that domain already has in the ids file (a suffixed namesake slug included).
 */
export function directoryIndex(candidates: Candidate[], ids: Record<string, number>): Directory {
  const slugs = new Map<string, Set<string>>();
  const byDomain = new Map<string, string | null>();
  for (const c of candidates) {
    const base = directorySlug(c.name);
    const domains = slugs.get(base) ?? new Set<string>();
    const suffixed = `${base}-${c.qid.toLowerCase()}`;
    const known = ids[suffixed] !== undefined ? suffixed : ids[base] !== undefined ? base : null;
    for (const h of c.hosts) {
      const domain = registrableDomain(h) ?? h;
      domains.add(domain);
      // a domain two companies give names neither
      if (known)
        byDomain.set(domain, byDomain.has(domain) && byDomain.get(domain) !== known ? null : known);
    }
    slugs.set(base, domains);
  }
  return { slugs, byDomain };
}

/**
 * fixtures/domain-overrides.json as domain -> slug, for the domains it gives exactly one brand
 * (removals, "!domain", left out): the thesvg merge joins an icon whose website is one of them.
 */
export function curatedDomains(domains: Fixtures["domains"]): Map<string, string> {
  const out = new Map<string, string | null>();
  for (const [slug, list] of Object.entries(domains)) {
    if (slug.startsWith("$") || !Array.isArray(list)) continue;
    for (const d of list)
      if (!d.startsWith("!")) out.set(d, out.has(d) && out.get(d) !== slug ? null : slug);
  }
  return new Map([...out].filter((e): e is [string, string] => e[1] !== null));
}

export function mergeSources(
  root: string,
  fixtures: Fixtures,
  ids: Record<string, number>,
): Merged {
  const candidates = loadCandidates(root);
  const retired = new Set(Object.keys(loadRedirects(root)));
  const directory = { ...directoryIndex(candidates, ids), retired };
  const merged = loadAndMerge(root, directory, curatedDomains(fixtures.domains));
  // @web3icons/core after every other set: its projects join reviewed brands only
  const web3 = importWeb3(root, merged.brands, new Set([...directory.slugs.keys(), ...retired]));
  merged.decisions.push(...web3.decisions);
  merged.stats.web3iconsNewBrands = web3.added;
  applyNameOverrides(merged.brands, fixtures.names);
  const aliasCount = applyAliasOverrides(merged.brands, fixtures.aliases);
  return { ...merged, aliasCount, candidates, web3 };
}

/** The merge phase's progress line: brands per source. */
export function mergeSummary({ brands, stats }: Pick<MergeResult, "brands" | "stats">): string {
  return (
    `${brands.length} brands: ${stats.simpleIcons} simple-icons, +${stats.logosNewBrands} logos, ` +
    `+${stats.deviconNewBrands} devicon, +${stats["skill-iconsNewBrands"]} skill-icons, ` +
    `+${stats.lobehubNewBrands} lobehub, +${stats.cibNewBrands} cib, +${stats["fa6-brandsNewBrands"]} fa6-brands, ` +
    `+${stats.bxlNewBrands} bxl, +${stats["streamline-logosNewBrands"]} streamline-logos, +${stats.tablerNewBrands} tabler, +${stats.thesvgNewBrands ?? 0} thesvg only, +${stats.web3iconsNewBrands ?? 0} web3icons`
  );
}
