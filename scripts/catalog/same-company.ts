/**
 * One company, one entry: a name-suggestion-index company that became a directory entry of its
 * own although an icon-set brand has its name (Google and google-q95, Tesco and tesco-q487494)
 * joins that brand only on evidence that the two are one company. The name alone never joins:
 * most such pairs are namesakes (Argos the British retailer and the Dutch fuel company, Bugatti
 * the car maker and the fashion house, Kik the messenger and KiK the discount chain).
 *
 * Evidence, tried in order (`sameCompany`):
 * 1. own URL: the brand's own source or guidelines URL is on one of the company's websites
 *    (Google's guidelines are on about.google, the website Wikidata gives Google);
 * 2. shared website: one of the brand's domains and one of the company's websites share a
 *    registrable domain (every website the company's Wikidata item gives counts, also those the
 *    parent-brand rule gave nobody: renaultgroup.com, which Renault and Dacia both give);
 * 3. shared website of the brand's own Wikidata item (a company merged into it by the directory
 *    step): O2 the Telefónica brand and Telefónica Deutschland (`o2`) both give o2online.de;
 * 4. national site: the brand is a company Wikidata knows, with sites under its name's label in
 *    at least two countries (hsbc.co.uk, hsbc.com.mx ...), and every website of the entry is that
 *    label under another country's suffix where OpenStreetMap maps the entry, as a business of
 *    the brand's kind (a category in common): hsbc.com.tw, HSBC's bank in Taiwan, but not
 *    nike.sk, Niké the Slovak bookmaker. A brand with one national site (vivo.co.in, the phone
 *    maker) does not take a namesake's (vivo.com.br, the Brazilian telecoms brand), nor does a
 *    brand known by a .com take a namesake's national sites (kik.com and kik.de).
 *
 * `fixtures/directory-joins.json` decides what no rule can, each with a reason: `join` (the
 * company's sites share no domain with the brand's: Tesco's tesco.com and Tesco plc's tesco.ie,
 * tesco.pl ...) and `apart` (a rule would join a namesake). Keys are Wikidata ids.
 */
import { countryOf, normalizeHost, registrableDomain } from "../../src/catalog/brand/domain";
import { compactKey } from "./keys";

export interface JoinDecision {
  brand: string;
  why: string;
}

export interface DirectoryJoins {
  /** Wikidata id -> the icon-set brand's slug it is, and why no rule can tell */
  join: Record<string, JoinDecision>;
  /** Wikidata id -> the icon-set brand a rule would join it to although it is a namesake */
  apart: Record<string, JoinDecision>;
}

/** The icon-set brand's side: what it says about its own websites. */
export interface BrandSide {
  slug: string;
  name: string;
  domains: string[];
  sourceUrl: string | null;
  guidelinesUrl: string | null;
  wikidata?: string;
  /** the websites the brand's own Wikidata item gives (none without one) */
  itemHosts: string[];
  /** what OpenStreetMap maps it as, when a directory company was merged into it ("shop/chemist") */
  categories?: string[];
}

/** The directory entry's side. */
export interface CompanySide {
  qid: string;
  name: string;
  /** the hosts the entry holds */
  domains: string[];
  /** every website its Wikidata item gives, whoever got it */
  hosts: string[];
  /** where OpenStreetMap maps it (Candidate.areas) */
  areas: string[];
  /** what OpenStreetMap maps it as (Candidate.categories) */
  categories?: string[];
}

/**
 * Hosts of a source or guidelines URL that say nothing about whose site it is: code forges,
 * wikis, social and file-hosting platforms, brand-portal services.
 */
const NOBODYS =
  /(^|\.)(github\.com|github\.io|gitlab\.com|gitlab\.io|bitbucket\.org|sourceforge\.net|codeberg\.org|npmjs\.com|wikipedia\.org|wikimedia\.org|wikidata\.org|google\.com|youtube\.com|facebook\.com|x\.com|twitter\.com|linkedin\.com|instagram\.com|medium\.com|behance\.net|dribbble\.com|figma\.com|brandpad\.io|frontify\.com|brandfolder\.com|dropbox\.com|box\.com|bynder\.com|issuu\.com)$/;

const reg = (host: string) => registrableDomain(host) ?? host;

function hostOf(url: string | null): string | null {
  if (!url) return null;
  const h = normalizeHost(url);
  return h.ok ? h.host : null;
}

/** The label of a host's registrable domain ("www.mcdonalds.co.uk" -> "mcdonalds"). */
export function domainLabel(host: string): string {
  const r = reg(host);
  return r.slice(0, r.indexOf("."));
}

/** The country of a domain under a country's suffix (bmw.de -> de, tesco.co.uk -> gb), else null. */
export function domainCountry(domain: string): string | null {
  const r = reg(domain);
  const country = countryOf(r.slice(r.indexOf(".") + 1));
  // the United Kingdom's suffix is .uk, its ISO code (as OSM maps it) gb
  return country === "uk" ? "gb" : country;
}

/** Whether OSM maps a company in `country`: listed, or in a region (UN M49 code), or unknown. */
export function mappedIn(country: string, areas: string[]): boolean {
  return !areas.length || areas.includes(country) || areas.some((a) => /^\d+$/.test(a));
}

/**
 * The evidence that directory company `c` is icon-set brand `b` (one line for the build
 * report), or null when nothing says so. The names are assumed to be the same.
 */
export function sameCompany(b: BrandSide, c: CompanySide): string | null {
  const theirs = new Map(c.hosts.map((h) => [reg(h), h]));
  for (const [kind, url] of [
    ["source", b.sourceUrl],
    ["guidelines", b.guidelinesUrl],
  ] as const) {
    const host = hostOf(url);
    if (!host || NOBODYS.test(reg(host))) continue;
    const site = theirs.get(reg(host));
    if (site) return `own URL: the brand's ${kind} URL ${url} is on the company's website ${site}`;
  }
  for (const d of b.domains) {
    const site = theirs.get(reg(d));
    if (site) return `shared website: the brand's ${d} and the company's ${site}`;
  }
  for (const h of b.itemHosts) {
    const site = theirs.get(reg(h));
    if (site)
      return `shared website: the brand's Wikidata item ${b.wikidata} gives ${h}, the company ${site}`;
  }
  // a national site: the brand's label in another country, where the company is mapped, as
  // a business of the brand's kind (Niké the Slovak bookmaker's nike.sk is not Nike's)
  const label = compactKey(b.name);
  const kind = c.categories?.find((k) => b.categories?.includes(k));
  if (b.wikidata && label && kind && c.domains.length) {
    const national = b.domains.filter((d) => domainLabel(d) === label && domainCountry(d));
    const countries = new Set(national.map(domainCountry));
    if (
      countries.size >= 2 &&
      c.domains.every((h) => {
        const country = domainCountry(h);
        return domainLabel(h) === label && country !== null && mappedIn(country, c.areas);
      })
    )
      return `national site: ${c.domains.join(" ")} beside the brand's ${national.join(" ")}, both mapped as ${kind}`;
  }
  return null;
}

/**
 * Which icon-set brand of its name (`brands`) directory company `c` joins, if any: the curated
 * decision when there is one, else the one brand the evidence names. `note` says why a company
 * the fixture names, or that the evidence names twice, stays an entry; `used` collects the
 * fixture keys that decided something.
 */
export function decideJoin(
  qid: string,
  brands: BrandSide[],
  c: CompanySide,
  joins: DirectoryJoins,
  used: Set<string>,
): { into?: string; why?: string; note?: string } {
  const apart = joins.apart[qid];
  if (apart) {
    used.add(`apart ${qid}`);
    return { note: `stays apart from ${apart.brand}: curated: ${apart.why}` };
  }
  const curated = joins.join[qid];
  if (curated) {
    used.add(`join ${qid}`);
    return brands.some((b) => b.slug === curated.brand)
      ? { into: curated.brand, why: `curated: ${curated.why}` }
      : {
          note: `curated join into ${curated.brand}, which is not a brand of its name; not joined`,
        };
  }
  const hits = brands.flatMap((b) => {
    const why = sameCompany(b, c);
    return why ? [{ into: b.slug, why }] : [];
  });
  if (hits.length > 1)
    return { note: `evidence for ${hits.map((h) => h.into).join(" and ")}; not joined` };
  return hits[0] ?? {};
}

/** The fixture's keys ("join Q487494") that decided nothing: stale entries to remove. */
export function unusedJoins(joins: DirectoryJoins, used: ReadonlySet<string>): string[] {
  return (["join", "apart"] as const).flatMap((kind) =>
    Object.keys(joins[kind])
      .map((qid) => `${kind} ${qid}`)
      .filter((key) => !used.has(key)),
  );
}
