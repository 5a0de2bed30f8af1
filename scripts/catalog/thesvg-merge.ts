/**
 * Merging @thesvg/icons (scripts/catalog/thesvg.ts) into the draft brands, so that no two
 * companies share a slug and no company gets two:
 *
 * 1. by domain: the icon's website names the brand (a claim of strength >= 2, see
 *    domains.ts claimsFromUrl) and exactly one draft claims the same domain from its own URLs;
 * 2. else by name: slug, simple-icons slug of the title, compact title, in the tiers of the
 *    other sets (exact keys that name one brand), or a brand an earlier icon created;
 * 3. a name match is refused, and the icon left out and listed, when its website is held by
 *    another brand, or when both the icon's and the brand's websites name the brand under
 *    different domain labels (namesakes: getmocha.com's Mocha is not mochajs.org's);
 * 4. an icon matching nothing becomes a new brand named by its title, with the directory's
 *    slug rule (nsi.ts directorySlug), or the slug a directory company with the same website
 *    already has (the directory then merges into it and slug and id stay); when a
 *    name-suggestion-index company already has the slug, the icon takes it only if its
 *    website is one of the company's domains, else it is left out as a namesake (Adobe's
 *    Animate is not the retailer Animate).
 * A brand takes one thesvg icon (the first by slug); later ones are listed as duplicates.
 */
import { normalizeHost, registrableDomain } from "../../src/catalog/brand/domain";
import { claimsFromUrl, type DomainBrand } from "./domains";
import type { DraftBrand } from "./draft";
import { compactKey, siSlugify, type TieredIndex } from "./keys";
import { SYNONYMS } from "./names";
import { directorySlug } from "./nsi";
import { THESVG_SOURCE, type TheSvgIcon } from "./thesvg";

const asDomainBrand = (slug: string, keys: Set<string>): DomainBrand => ({
  id: 0,
  slug,
  keys,
  fromSimpleIcons: false,
  sourceUrl: null,
  otherUrls: [],
});

/** Hosts and domains the URLs name (claims of strength >= 2). */
function namedDomains(slug: string, keys: Set<string>, urls: (string | null)[]): Set<string> {
  const out = new Set<string>();
  for (const url of urls) {
    if (!url) continue;
    for (const c of claimsFromUrl(asDomainBrand(slug, keys), url)) {
      if (c.strength >= 2) out.add(c.domain);
    }
  }
  return out;
}

/** "docs.mochajs.org" -> "mochajs" */
function labelOf(host: string): string {
  const domain = registrableDomain(host) ?? host;
  return domain.slice(0, domain.indexOf("."));
}

const draftUrls = (d: DraftBrand) => [d.sourceUrl, d.guidelinesUrl, ...d.extraUrls];

export function iconKeys(icon: TheSvgIcon): Set<string> {
  return new Set(
    [icon.slug, icon.title, ...icon.aliases].map(compactKey).filter((k) => k.length > 0),
  );
}

/** The name-suggestion-index companies, see steps/merge.ts directoryIndex. */
export interface Directory {
  slugs: Map<string, Set<string>>;
  byDomain: Map<string, string | null>;
}

export interface TheSvgMerge {
  added: number;
  byDomain: number;
  byName: number;
  /** "icon -> brand: why" lines for the build report */
  decisions: string[];
  clashes: number;
  duplicates: number;
}

/**
 * Attach each icon to a draft (`draft.thesvg`) or create a draft for it. `find` looks a key
 * up among the existing drafts (the tiers of merge.ts and the iconify-only brands).
 */
export function mergeTheSvg(
  drafts: DraftBrand[],
  icons: TheSvgIcon[],
  index: TieredIndex<DraftBrand>,
  others: Map<string, DraftBrand>,
  directory: Directory = { slugs: new Map(), byDomain: new Map() },
): TheSvgMerge {
  const result: TheSvgMerge = {
    added: 0,
    byDomain: 0,
    byName: 0,
    decisions: [],
    clashes: 0,
    duplicates: 0,
  };
  const byDomain = new Map<string, Set<DraftBrand>>();
  const domainsOf = new Map<DraftBrand, Set<string>>();
  const addDomains = (d: DraftBrand, domains: Set<string>) => {
    domainsOf.set(d, new Set([...(domainsOf.get(d) ?? []), ...domains]));
    for (const domain of domains)
      byDomain.set(domain, new Set([...(byDomain.get(domain) ?? []), d]));
  };
  for (const d of drafts) addDomains(d, namedDomains(d.slug, d.keys, draftUrls(d)));
  const slugs = new Set(drafts.map((d) => d.slug));
  const created = new Map<string, DraftBrand>();
  const find = (key: string) => index.find(key) ?? others.get(key) ?? created.get(key);

  for (const icon of icons) {
    const keys = iconKeys(icon);
    const domains = namedDomains(icon.slug, keys, [icon.url]);
    const owners = new Set([...domains].flatMap((d) => [...(byDomain.get(d) ?? [])]));
    let brand: DraftBrand | undefined;
    let how = "";
    if (owners.size === 1) {
      brand = [...owners][0];
      how = "domain";
    } else {
      const compact = compactKey(icon.slug);
      const titleKey = compactKey(icon.title);
      brand =
        find(SYNONYMS[compact] ?? compact) ??
        find(siSlugify(icon.title)) ??
        find(SYNONYMS[titleKey] ?? titleKey);
      how = "name";
      // the name says one brand, the website another: two companies, or one we cannot tell
      if (brand && owners.size && !owners.has(brand)) {
        result.clashes++;
        result.decisions.push(
          `thesvg ${icon.slug} -> left out: named like ${brand.slug}, website ${[...domains][0]} held by ${[...owners].map((o) => o.slug).join(", ")}`,
        );
        continue;
      }
      // both websites name the brand, under different labels: namesakes (getmocha.com's
      // Mocha app builder is not mochajs.org's Mocha test framework)
      const theirs = new Set([...(brand ? (domainsOf.get(brand) ?? []) : [])].map(labelOf));
      const ours = [...domains].map(labelOf);
      if (brand && theirs.size && ours.length && !ours.some((l) => theirs.has(l))) {
        result.clashes++;
        result.decisions.push(
          `thesvg ${icon.slug} (${[...domains][0]}) -> left out: namesake of ${brand.slug} (${[...(domainsOf.get(brand) ?? [])].join(" ")})`,
        );
        continue;
      }
    }
    if (brand) {
      if (brand.thesvg) {
        result.duplicates++;
        result.decisions.push(
          `thesvg ${icon.slug} -> left out: ${brand.slug} already has thesvg ${brand.thesvg.slug}`,
        );
        continue;
      }
      brand.thesvg = icon;
      brand.sources.add(THESVG_SOURCE);
      // the icon's website becomes one of the brand's URLs where it names the brand
      if (icon.url && domains.size) brand.extraUrls.push(icon.url);
      for (const k of keys) brand.keys.add(k);
      addDomains(brand, domains);
      if (how === "domain") result.byDomain++;
      else result.byName++;
      result.decisions.push(
        `thesvg ${icon.slug} -> merged into ${brand.slug} (${brand.name}, by ${how})`,
      );
      continue;
    }
    const host = icon.url ? normalizeHost(icon.url) : null;
    const site = host?.ok ? registrableDomain(host.host) : null;
    // a company the directory already lists under this website keeps its slug (and id)
    const listed = site ? directory.byDomain.get(site) : null;
    const slug = listed || directorySlug(icon.title) || compactKey(icon.slug);
    if (slugs.has(slug)) {
      result.clashes++;
      result.decisions.push(`thesvg ${icon.slug} -> left out: slug ${slug} is taken`);
      continue;
    }
    const company = directory.slugs.get(slug);
    if (company && !(site && company.has(site))) {
      result.clashes++;
      result.decisions.push(
        `thesvg ${icon.slug} (${site ?? "no website"}) -> left out: namesake of the directory's ${slug} (${[...company].join(" ")})`,
      );
      continue;
    }
    const draft: DraftBrand = {
      key: slug,
      slug,
      name: icon.title,
      aliases: icon.aliases.filter((a) => a !== icon.title),
      hex: icon.hex,
      sourceUrl: null,
      guidelinesUrl: null,
      // the website only where it names the brand or the directory lists it for the company:
      // bbc.co.uk/news is the BBC's, not BBC News's
      extraUrls: icon.url && (domains.size || listed) ? [icon.url] : [],
      keys: new Set([slug, ...keys]),
      primaryKeys: new Set([slug, compactKey(icon.title)]),
      sources: new Set([THESVG_SOURCE]),
      siSvg: null,
      candidates: [],
      thesvg: icon,
    };
    drafts.push(draft);
    slugs.add(slug);
    for (const k of [slug, compactKey(icon.title), siSlugify(icon.title)]) {
      if (!created.has(k)) created.set(k, draft);
    }
    addDomains(draft, domains);
    result.added++;
    result.decisions.push(`thesvg ${icon.slug} -> new brand ${slug}`);
  }
  return result;
}
