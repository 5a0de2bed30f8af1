/**
 * Merging @thesvg/icons (scripts/catalog/thesvg.ts) into the draft brands, so that no two
 * companies share a slug and no company gets two:
 *
 * 1. by domain: the icon's website names the brand (a claim of strength >= 2, see
 *    domains.ts claimsFromUrl) and exactly one draft claims the same domain from its own URLs;
 * 2. else by name: slug, simple-icons slug of the title, compact title, in the tiers of the
 *    other sets (exact keys that name one brand), or a brand an earlier icon created; a title
 *    qualified "(legacy)", "(old)" or "(new)" names the brand without the qualifier, and
 *    former artwork is left out (the brand keeps its current mark);
 * 3. else by drawing: the icon is drawn with the path data of a lobehub icon, and that icon's
 *    brand is the only one so drawn ("Aya (Cohere)" is lobehub's Aya; thesvg copied the AI
 *    marks from lobehub under titles with the company in parentheses), except the reviewed
 *    namesakes of DRAWN_ELSEWHERE;
 * 4. else by curated domain: the icon's website names it and is a domain
 *    fixtures/domain-overrides.json gives one brand (front.com is Frontapp's);
 * 5. a name, drawing or curated-domain match is refused, and the icon left out and listed,
 *    when its website is held by another brand, or when both the icon's and the brand's
 *    websites name the brand under different domain labels (namesakes: getmocha.com's Mocha
 *    is not mochajs.org's);
 * 6. an icon matching nothing becomes a new brand named by its title, with the directory's
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

/** A title's trailing qualifier: the same brand's former or new artwork. */
const QUALIFIED = /^(.+?)\s*\((legacy|old|new)\)$/i;

/**
 * thesvg icons drawn like a lobehub icon whose brand is another company of the same name: the
 * lobehub icon was merged by name into a namesake, so the drawing does not name the brand.
 * Reviewed; the rest of the drawing matches are the same brand.
 */
export const DRAWN_ELSEWHERE: Record<string, string> = {
  "automatic1111-sd-webui":
    "the Stable Diffusion web UI; lobehub's Automatic shares a brand with cib's Automatic",
  "dolphin-dphnai": "Dolphin the AI model (dphn.ai); lobehub's Dolphin is in the Dolphin emulator",
  "flux-black-forest-labs":
    "Black Forest Labs' FLUX model; lobehub's Flux is in Flux, the CNCF GitOps project",
};

/** Path data long enough to identify a drawing ("M0 0h24v24H0z" frames do not count). */
const pathData = (svg: string) =>
  [...svg.matchAll(/\sd="([^"]{40,})"/g)].map((m) => (m[1] as string).replace(/\s+/g, " ").trim());

/** Path data -> the one draft whose lobehub icons draw it (data two drafts draw is dropped). */
function lobehubDrawings(drafts: DraftBrand[]): Map<string, DraftBrand | null> {
  const out = new Map<string, DraftBrand | null>();
  for (const d of drafts)
    for (const c of d.candidates)
      if (c.set === "lobehub")
        for (const data of pathData(c.icon.body))
          out.set(data, out.has(data) && out.get(data) !== d ? null : d);
  return out;
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
  /** slugs retired into another brand (fixtures/slug-redirects.json): no new brand takes one */
  retired?: ReadonlySet<string>;
}

export interface TheSvgMerge {
  added: number;
  byDomain: number;
  byName: number;
  /** joined by the lobehub drawing they copy or by a curated domain */
  byDrawingOrCurated: number;
  /** "icon -> brand: why" lines for the build report */
  decisions: string[];
  clashes: number;
  duplicates: number;
}

/**
 * Attach each icon to a draft (`draft.thesvg`) or create a draft for it. `find` looks a key
 * up among the existing drafts (the tiers of icon-sets.ts and the iconify-only brands).
 */
export function mergeTheSvg(
  drafts: DraftBrand[],
  icons: TheSvgIcon[],
  index: TieredIndex<DraftBrand>,
  others: Map<string, DraftBrand>,
  directory: Directory = { slugs: new Map(), byDomain: new Map() },
  curated: ReadonlyMap<string, string> = new Map(),
): TheSvgMerge {
  const result: TheSvgMerge = {
    added: 0,
    byDomain: 0,
    byName: 0,
    byDrawingOrCurated: 0,
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
  const slugs = new Set([...drafts.map((d) => d.slug), ...(directory.retired ?? [])]);
  const created = new Map<string, DraftBrand>();
  const find = (key: string) => index.find(key) ?? others.get(key) ?? created.get(key);
  /** the brand the name finds, and whether only through the reviewed synonyms */
  const byName = (slug: string, title: string): [DraftBrand | undefined, boolean] => {
    const compact = compactKey(slug);
    const titleKey = compactKey(title);
    const plain = find(compact) ?? find(siSlugify(title)) ?? find(titleKey);
    if (plain) return [plain, false];
    const synonym = find(SYNONYMS[compact] ?? compact) ?? find(SYNONYMS[titleKey] ?? titleKey);
    return [synonym, synonym !== undefined];
  };
  const drawings = lobehubDrawings(drafts);
  const byDrawing = (icon: TheSvgIcon) => {
    if (DRAWN_ELSEWHERE[icon.slug]) return undefined;
    const hits = new Set(
      [icon.svg, icon.mono ?? "", icon.wordmark ?? ""]
        .flatMap(pathData)
        .map((p) => drawings.get(p)),
    );
    hits.delete(undefined);
    return hits.size === 1 ? ([...hits][0] ?? undefined) : undefined;
  };
  const draftBySlug = new Map(drafts.map((d) => [d.slug, d]));

  // icons that join a brand under another name (a synonym, a qualified title, a drawing, a
  // curated domain) after the others: the brand's own icon, or the brand itself, may come later
  const deferred: TheSvgIcon[] = [];
  const place = (icon: TheSvgIcon, last: boolean) => {
    const keys = iconKeys(icon);
    const domains = namedDomains(icon.slug, keys, [icon.url]);
    const owners = new Set([...domains].flatMap((d) => [...(byDomain.get(d) ?? [])]));
    let brand: DraftBrand | undefined;
    let how = "";
    if (owners.size === 1) {
      brand = [...owners][0];
      how = "domain";
    } else {
      const qualified = QUALIFIED.exec(icon.title);
      const [named, viaSynonym] = byName(icon.slug, qualified?.[1] ?? icon.title);
      brand = named;
      how = viaSynonym ? "synonym" : "name";
      if (!brand) {
        brand = byDrawing(icon);
        how = "drawing";
      }
      if (!brand) {
        const slug = [...domains].map((d) => curated.get(d)).find((s) => s !== undefined);
        brand = slug ? draftBySlug.get(slug) : undefined;
        how = "curated domain";
      }
      if (!last && (qualified || (brand && how !== "name"))) {
        deferred.push(icon);
        return;
      }
      // the name says one brand, the website another: two companies, or one we cannot tell
      if (brand && owners.size && !owners.has(brand)) {
        result.clashes++;
        result.decisions.push(
          `thesvg ${icon.slug} -> left out: named like ${brand.slug}, website ${[...domains][0]} held by ${[...owners].map((o) => o.slug).join(", ")}`,
        );
        return;
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
        return;
      }
      if (brand && qualified && /legacy|old/i.test(qualified[2] as string)) {
        result.duplicates++;
        result.decisions.push(
          `thesvg ${icon.slug} -> left out: former artwork of ${brand.slug} (${brand.name})`,
        );
        return;
      }
    }
    if (brand) {
      if (brand.thesvg) {
        result.duplicates++;
        result.decisions.push(
          `thesvg ${icon.slug} -> left out: ${brand.slug} already has thesvg ${brand.thesvg.slug}`,
        );
        return;
      }
      brand.thesvg = icon;
      brand.sources.add(THESVG_SOURCE);
      // the icon's website becomes one of the brand's URLs where it names the brand
      if (icon.url && domains.size) brand.extraUrls.push(icon.url);
      for (const k of keys) brand.keys.add(k);
      addDomains(brand, domains);
      if (how === "domain") result.byDomain++;
      else if (how === "name" || how === "synonym") result.byName++;
      else result.byDrawingOrCurated++;
      result.decisions.push(
        `thesvg ${icon.slug} -> merged into ${brand.slug} (${brand.name}, by ${how})`,
      );
      return;
    }
    const host = icon.url ? normalizeHost(icon.url) : null;
    const site = host?.ok ? registrableDomain(host.host) : null;
    // a company the directory already lists under this website keeps its slug (and id)
    const listed = site ? directory.byDomain.get(site) : null;
    const slug = listed || directorySlug(icon.title) || compactKey(icon.slug);
    if (slugs.has(slug)) {
      result.clashes++;
      result.decisions.push(`thesvg ${icon.slug} -> left out: slug ${slug} is taken`);
      return;
    }
    const company = directory.slugs.get(slug);
    if (company && !(site && company.has(site))) {
      result.clashes++;
      result.decisions.push(
        `thesvg ${icon.slug} (${site ?? "no website"}) -> left out: namesake of the directory's ${slug} (${[...company].join(" ")})`,
      );
      return;
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
  };
  for (const icon of icons) place(icon, false);
  for (const icon of deferred) place(icon, true);
  return result;
}
