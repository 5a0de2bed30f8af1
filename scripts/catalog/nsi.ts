/**
 * The brand directory: companies from OpenStreetMap's name-suggestion-index (npm
 * `name-suggestion-index`, dist/json/nsi.min.json + dist/wikidata/wikidata.min.json), merged
 * into the built catalog. Only what the package ships is used (its logo URLs are never fetched):
 * the brand's name as mapped in OSM, Wikidata's label and description, official websites and
 * social identities. Directory entries carry no SVG (`variants` is empty; the API serves the
 * placeholder or a monogram for them).
 *
 * The brand's names in its own script (`brand:ja`, `brand:zh`, `brand:ko`, `brand:ar`,
 * `brand:he`, `brand:th` tags) become aliases, so that 無印良品 finds Muji.
 *
 * Steps (every decision goes to the build report):
 * 1. One candidate per Wikidata id named as `brand:wikidata` in a `brands/*` category, or as
 *    `operator:wikidata` in an operator category of companies (post, charging, car sharing,
 *    telecoms, energy suppliers); without an official website it is dropped.
 * 2. Parent-brand rule, for a host several candidates give: fixtures/directory-parents.json,
 *    else the one candidate whose name is the domain's label (amazon.com -> Amazon, not Amazon
 *    Books), else the one whose name every other claimant's name starts with (McDonald's, not
 *    McDonald's Ukraine), else the one most OSM entries point to as their brand when it has at
 *    least twice the next; else nobody gets the host.
 * 3. Merge into the catalog: by Wikidata id, then by a host the catalog brand already owns,
 *    then by name when the two agree (nameMergeAgrees; never for brands in `byDomainOnly`,
 *    see steps/enrich.ts), then a second Wikidata item of a catalog brand by the same name
 *    and the same Wikidata logo file (its websites become alias domains); the
 *    catalog brand gains the description, Wikidata id, links and the hosts nobody owns. Other
 *    candidates become directory entries (a namesake of a catalog brand gets the Wikidata id in
 *    its slug).
 * 4. An entry named like an icon-set brand joins it when the evidence says they are one company
 *    (scripts/catalog/same-company.ts, fixtures/directory-joins.json): the brand gains what a
 *    merge gives, and the entry's hosts and other names; the entry's slug is retired.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { normalizeHost, registrableDomain } from "../../src/catalog/brand/domain";
import type { Brand } from "../../src/catalog/built-catalog";
import { compactKey } from "./keys";
import {
  type DirectoryJoins,
  decideJoin,
  domainCountry,
  domainLabel,
  mappedIn,
  unusedJoins,
} from "./same-company";

export const NSI_SOURCE = "name-suggestion-index";

/** Operator categories whose operators are companies a user would look up. */
const COMPANY_OPERATORS = new Set([
  "operators/amenity/charging_station",
  "operators/man_made/charge_point",
  "operators/amenity/post_office",
  "operators/amenity/post_box",
  "operators/amenity/post_depot",
  "operators/amenity/car_sharing",
  "operators/amenity/bicycle_rental",
  "operators/telecom/exchange",
  "operators/telecom/data_center",
  "operators/office/energy_supplier",
  "operators/shop/mobile_phone",
  "operators/amenity/fuel",
]);

/** Hosts that are platforms, not a company's own site. */
const PLATFORM_HOSTS =
  /(^|\.)(facebook\.com|instagram\.com|twitter\.com|x\.com|linkedin\.com|youtube\.com|wikipedia\.org|wikidata\.org|linktr\.ee|google\.com|blogspot\.com|wordpress\.com|wixsite\.com|business\.site|tiktok\.com|vk\.com|t\.me)$/;

/** Legal forms dropped from Wikidata labels ("Allianz SE", "Equinor ASA", "Tesco plc"). */
const LEGAL_FORM =
  /[ ,]+(SE|AG|ASA|AB|plc|PLC|Inc\.?|Corp\.?|Corporation|S\.A\.|SA|S\.p\.A\.|N\.V\.|NV|GmbH|Ltd\.?|Limited|LLC|Co\.)$/;

const COMPANY =
  /\b(company|companies|corporation|multinational|conglomerate|utility|bank|enterprise|manufacturer|operator|provider|retailer|chain)\b/i;
const PUBLIC =
  /\b(municipal\w*|city|town|county|government|agency|ministry|department|authority|district|school|university|council|state|federal|public|non-profit|association|foundation|charity)\b/i;

/** Wikidata's description calls it a company, not a public body. */
function isCompany(w: WikidataEntry | undefined): boolean {
  const d = w?.description ?? "";
  return COMPANY.test(d) && !PUBLIC.test(d);
}

const SOCIAL: Record<string, (id: string) => string> = {
  facebook: (id) => `https://www.facebook.com/${id}`,
  instagram: (id) => `https://www.instagram.com/${id}`,
  twitter: (id) => `https://x.com/${id}`,
  youtube: (id) => `https://www.youtube.com/channel/${id}`,
  linkedin: (id) => `https://www.linkedin.com/company/${id}`,
  tiktok: (id) => `https://www.tiktok.com/@${id}`,
};

interface WikidataEntry {
  label?: string;
  description?: string;
  identities?: Record<string, string>;
  officialWebsites?: string[];
  logos?: Record<string, string>;
}

export interface Candidate {
  qid: string;
  /** the name OSM maps most often, else Wikidata's label */
  name: string;
  label: string | null;
  otherNames: string[];
  /** the brand's name in its own script (`brand:ja`, `brand:zh`, ... tags: NATIVE_TAG) */
  nativeNames: string[];
  /** OSM entries that point to this id */
  weight: number;
  hosts: string[];
  description?: string;
  links: Record<string, string>;
  /** the Commons file Wikidata names as the logo ("shell wordmark 2019.svg"), lower case */
  logo?: string;
  /**
   * where OSM maps it: the `locationSet.include` codes of its entries, lower case (ISO
   * countries such as "gb", UN M49 regions such as "001" or "150"); absent or empty: unknown
   */
  areas?: string[];
  /** what OSM maps its entries as: the category paths without brands/ or operators/ ("amenity/fuel") */
  categories?: string[];
}

/** The Commons file name of a Wikidata logo URL (FilePath or Special:Redirect form), lower case. */
export function commonsFile(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const m = /(?:FilePath\/|Redirect%2Ffile%2F|File:)([^?&#]+)/i.exec(url);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]).replace(/_/g, " ").trim().toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The host a website URL names (without "www."), or null for a platform's page (a site on
 * sites.google.com, a Facebook page): a platform's own domain counts only for the platform.
 */
function siteHost(url: string, name: string): string | null {
  const h = normalizeHost(url);
  if (!h.ok) return null;
  const reg = registrableDomain(h.host);
  if (!reg) return null;
  if (PLATFORM_HOSTS.test(reg) && (h.host !== reg || compactKey(name) !== domainLabel(reg))) {
    return null;
  }
  return h.host;
}

/** Languages whose script a brand's own name may be in: `brand:ja`, `brand:zh-Hant` ... (not `-Latn`). */
const NATIVE_TAG = /^(zh|ja|ko|ar|he|th)(-(Hans|Hant|TW|HK|CN|JP|KR))?$/;

/** URL-safe slug from a display name ("McDonald's" -> "mcdonalds", "Crédit Agricole" -> "credit-agricole"). */
export function directorySlug(name: string): string {
  return name
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/['’.]/g, "")
    .replace(/&/g, "and")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

export function loadCandidates(root: string): Candidate[] {
  const dist = join(root, "node_modules", NSI_SOURCE, "dist");
  const nsi: Record<
    string,
    {
      items: {
        tags: Record<string, string>;
        displayName: string;
        locationSet?: { include?: unknown[] };
      }[];
    }
  > = JSON.parse(readFileSync(join(dist, "json/nsi.min.json"), "utf8")).nsi;
  const wikidata: Record<string, WikidataEntry> = JSON.parse(
    readFileSync(join(dist, "wikidata/wikidata.min.json"), "utf8"),
  ).wikidata;
  const names = new Map<string, Map<string, number>>();
  const native = new Map<string, Set<string>>();
  const areas = new Map<string, Set<string>>();
  const kinds = new Map<string, Set<string>>();
  for (const [path, category] of Object.entries(nsi)) {
    const isBrand = path.startsWith("brands/");
    if (!isBrand && !path.startsWith("operators/")) continue;
    for (const item of category.items) {
      const where = (item.locationSet?.include ?? []).filter((a) => typeof a === "string");
      // a brand's own id and the ids its entry points to (operator, brewery, network)
      for (const kind of isBrand ? ["brand", "operator", "brewery", "network"] : ["operator"]) {
        const qid = item.tags[`${kind}:wikidata`];
        const name = item.tags[kind] ?? (kind === "brand" ? item.displayName : undefined);
        if (!qid || !name) continue;
        // an operator outside the company categories counts when Wikidata calls it a company
        if (!isBrand && !COMPANY_OPERATORS.has(path) && !isCompany(wikidata[qid])) continue;
        const counts = names.get(qid) ?? new Map<string, number>();
        counts.set(name, (counts.get(name) ?? 0) + 1);
        names.set(qid, counts);
        const mapped = areas.get(qid) ?? new Set<string>();
        for (const a of where) mapped.add(a.toLowerCase());
        areas.set(qid, mapped);
        const mappedAs = kinds.get(qid) ?? new Set<string>();
        mappedAs.add(path.slice(path.indexOf("/") + 1));
        kinds.set(qid, mappedAs);
        for (const [tag, value] of Object.entries(item.tags)) {
          if (!tag.startsWith(`${kind}:`) || !NATIVE_TAG.test(tag.slice(kind.length + 1))) continue;
          const set = native.get(qid) ?? new Set<string>();
          set.add(value.trim());
          native.set(qid, set);
        }
      }
    }
  }
  const out: Candidate[] = [];
  for (const [qid, counts] of names) {
    const w = wikidata[qid];
    if (!w) continue;
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const label = w.label ?? null;
    const sites = [...(w.officialWebsites ?? []), w.identities?.website].filter(
      (u): u is string => !!u,
    );
    // Wikidata's label without a legal form ("Equinor ASA" -> "Equinor") when OSM uses it or
    // it is the label of the main website's domain (RWE, not "RWE Bücherschrank"); else the
    // Latin-script name OSM maps most often; else the label
    const short = label?.replace(LEGAL_FORM, "").trim() || null;
    const main = sites[0] ? normalizeHost(sites[0]) : null;
    const mainLabel = main?.ok ? compactKey(domainLabel(main.host)) : null;
    const osmKeys = new Set(ranked.map(([n]) => compactKey(n)));
    const labelFits =
      short &&
      directorySlug(short) &&
      (osmKeys.has(compactKey(short)) || compactKey(short) === mainLabel);
    const latin = ranked.find(([n]) => directorySlug(n));
    const name = (labelFits ? short : null) ?? latin?.[0] ?? label ?? ranked[0]?.[0];
    if (!name) continue;
    const hosts = [...new Set(sites.map((u) => siteHost(u, name)).filter((h): h is string => !!h))];
    const links: Record<string, string> = {};
    const website = w.identities?.website ?? w.officialWebsites?.[0];
    if (website) links.website = website;
    for (const [key, url] of Object.entries(SOCIAL)) {
      const id = w.identities?.[key];
      if (id && /^[\w.@-]+$/.test(id)) links[key === "twitter" ? "x" : key] = url(id);
    }
    const otherNames = [
      ...new Set([label, ...ranked.map(([n]) => n)].filter((n): n is string => !!n)),
    ]
      .filter((n) => n !== name)
      .slice(0, 4);
    const nativeNames = [...(native.get(qid) ?? [])].filter(
      (n) => n && n !== name && !otherNames.includes(n),
    );
    out.push({
      qid,
      name,
      label,
      otherNames,
      nativeNames,
      weight: ranked.reduce((s, [, n]) => s + n, 0),
      hosts,
      description: w.description,
      links,
      ...(commonsFile(w.logos?.wikidata) ? { logo: commonsFile(w.logos?.wikidata) } : {}),
      areas: [...(areas.get(qid) ?? [])],
      categories: [...(kinds.get(qid) ?? [])].sort(),
    });
  }
  return out.sort((a, b) => b.weight - a.weight || a.qid.localeCompare(b.qid));
}

/** Code forges and package registries: a brand whose own URL is on one is a software project. */
const CODE_HOSTS =
  /(^|\.)(github\.com|github\.io|gitlab\.com|gitlab\.io|bitbucket\.org|sourceforge\.net|codeberg\.org|npmjs\.com)$/;

/** The host of a URL that is a site's home page (https://cycling74.com/), else null. */
function homePageHost(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.pathname !== "/" || u.search) return null;
    const h = normalizeHost(u.hostname);
    return h.ok && !PLATFORM_HOSTS.test(h.host) && !CODE_HOSTS.test(h.host) ? h.host : null;
  } catch {
    return null;
  }
}

/**
 * Whether a directory company named like catalog brand `b` is that brand: the name alone is not
 * enough (fresh.fr's supermarket is not the Fresh web framework), the two must agree:
 * - the brand is drawn by simple-icons, the one source that draws companies outside technology
 *   (the iconify sets and lobehub draw developer tools, apps and AI companies, which have no
 *   shops or sites mapped in OpenStreetMap), and its own URLs are not on a code forge or
 *   package registry (a software project);
 * - and it has no domain, or shares a registrable domain with the company's websites, or, for a
 *   national company (a domain under a country-code suffix: movistar.com.co, ah.nl), the
 *   company's websites use the same label under another suffix and OSM maps the company in
 *   that country too (`areas`: Movistar in Colombia; not Argos, the Dutch fuel stations, for
 *   argos.co.uk, nor IRIS, Canadian opticians, for iris.co.uk, nor Zoom, a Venezuelan courier,
 *   for zoom.us). A brand known by a generic domain (ted.com, kodi.tv: .tv is a country code
 *   used generically) does not take a namesake's country site (ted.bg, kodi.de).
 * - The brand's source URL, when it is a site's home page, counts among its domains: simple-icons'
 *   Max (https://cycling74.com/, the programming environment) is not Max, the burger chain.
 */
export function nameMergeAgrees(
  b: Pick<Brand, "sources" | "sourceUrl" | "guidelinesUrl" | "domains">,
  hosts: string[],
  areas: string[] = [],
): boolean {
  if (!b.sources.includes("simple-icons")) return false;
  for (const url of [b.sourceUrl, b.guidelinesUrl]) {
    const h = url ? normalizeHost(url) : null;
    if (h?.ok && CODE_HOSTS.test(h.host)) return false;
  }
  const home = homePageHost(b.sourceUrl);
  const domains = home && !b.domains.includes(home) ? [...b.domains, home] : b.domains;
  if (!domains.length) return true;
  const theirs = new Set(hosts.map((h) => registrableDomain(h) ?? h));
  if (domains.some((d) => theirs.has(registrableDomain(d) ?? d))) return true;
  return domains.some((d) => {
    const country = domainCountry(d);
    return (
      country !== null &&
      mappedIn(country, areas) &&
      hosts.some((h) => domainLabel(h) === domainLabel(d))
    );
  });
}

/**
 * The countries OSM maps a company in (ISO 3166-1 alpha-2, lower case; a subdivision such as
 * "us-ca.geojson" counts for its country), or null when it is mapped in a region ("001" the
 * world, "150" Europe) or nowhere in particular: a national chain has them, an international one
 * has none.
 */
export function countriesOf(areas: string[] = []): string[] | null {
  const out = new Set<string>();
  for (const a of areas) {
    const m = /^([a-z]{2})(?:-|$)/.exec(a);
    if (!m?.[1]) return null;
    // OSM's codes for the United Kingdom and Metropolitan France
    out.add(m[1] === "uk" ? "gb" : m[1] === "fx" ? "fr" : m[1]);
  }
  return out.size ? [...out].sort() : null;
}

/** Parent-brand rule: which candidate owns a host several give (see the module comment). */
export function parentOf(
  host: string,
  claimants: Candidate[],
  fixture: Record<string, { wikidata: string | null }>,
): { winner: Candidate | null; rule: string } {
  const fixed = fixture[host];
  if (fixed) {
    return {
      winner: claimants.find((c) => c.qid === fixed.wikidata) ?? null,
      rule: "fixture",
    };
  }
  const label = compactKey(domainLabel(host));
  const keys = (c: Candidate) => [c.name, c.label ?? ""].map(compactKey);
  const byLabel = claimants.filter((c) => keys(c).includes(label));
  if (byLabel.length === 1)
    return { winner: byLabel[0] as Candidate, rule: "name is the domain label" };
  const prefix = claimants.filter((c) =>
    claimants.every((o) => o === c || compactKey(o.name).startsWith(compactKey(c.name))),
  );
  if (prefix.length === 1)
    return { winner: prefix[0] as Candidate, rule: "the others' names extend it" };
  // several are named after the domain (McDonald's and McDonald's Ukraine): the one most OSM
  // entries point to as their brand, when it has at least twice the next
  const [first, second] = [...byLabel].sort((a, b) => b.weight - a.weight);
  if (first && second && first.weight >= 2 * second.weight) {
    return { winner: first, rule: "named after the domain, most OSM entries point to it" };
  }
  return { winner: null, rule: "undecided: nobody gets it" };
}

export interface DirectoryResult {
  /** new directory entries, without ids (the caller assigns them) */
  entries: Omit<Brand, "id">[];
  merged: number;
  /** entries joined into the icon-set brand of the same company (scripts/catalog/same-company.ts) */
  joined: Join[];
  report: string[];
  candidates: number;
}

/** A directory entry joined into an icon-set brand: its slug is retired into the brand's. */
export interface Join {
  qid: string;
  name: string;
  /** the slug the entry would have had */
  slug: string;
  into: string;
  why: string;
}

/**
 * Merge the directory into `brands` (mutated: catalog brands gain fields and hosts) and return
 * the new entries. `retired`: slugs that redirect to another brand (fixtures/slug-redirects.json),
 * never given to an entry.
 */
export function buildDirectory(
  root: string,
  brands: Brand[],
  fixture: Record<string, { wikidata: string | null }>,
  byDomainOnly: Set<string> = new Set(),
  candidates: Candidate[] = loadCandidates(root),
  retired: ReadonlySet<string> = new Set(),
  joins: DirectoryJoins = { join: {}, apart: {} },
): DirectoryResult {
  const report: string[] = [];
  // 2. parent-brand rule per host
  const byHost = new Map<string, Candidate[]>();
  for (const c of candidates) {
    for (const h of c.hosts) byHost.set(h, [...(byHost.get(h) ?? []), c]);
  }
  const won = new Map<string, string[]>();
  for (const [host, claimants] of byHost) {
    let owner: Candidate | null = claimants[0] ?? null;
    if (claimants.length > 1 || fixture[host]) {
      const { winner, rule } = parentOf(host, claimants, fixture);
      owner = winner;
      report.push(
        `${host} -> ${winner ? `${winner.name} (${winner.qid})` : "(nobody)"} [${rule}] claimed by ${claimants.map((c) => `${c.name} (${c.qid})`).join(", ")}`,
      );
    }
    if (owner) won.set(owner.qid, [...(won.get(owner.qid) ?? []), host]);
  }
  // 3. merge with the catalog
  const owned = new Map<string, Brand>();
  for (const b of brands) for (const d of b.domains) owned.set(d, b);
  const byName = new Map<string, Brand[]>();
  for (const b of brands) {
    for (const k of new Set([b.name, b.slug].map(compactKey))) {
      byName.set(k, [...(byName.get(k) ?? []), b]);
    }
  }
  const byQid = new Map<string, Brand>();
  const slugs = new Set([...brands.map((b) => b.slug), ...retired]);
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const entries: Omit<Brand, "id">[] = [];
  let merged = 0;
  const claim = (host: string) => !owned.has(host);
  const logoOf = new Map(candidates.flatMap((c) => (c.logo ? [[c.qid, c.logo] as const] : [])));
  // where and as what OSM maps each brand: the union over the companies merged into it; one of
  // them mapped internationally makes the brand international (no countries)
  const international = new Set<Omit<Brand, "id">>();
  const mapWhere = (b: Omit<Brand, "id">, c: Candidate) => {
    const countries = countriesOf(c.areas);
    if (!countries) {
      international.add(b);
      delete b.countries;
    } else if (!international.has(b))
      b.countries = [...new Set([...(b.countries ?? []), ...countries])].sort();
    if (c.categories?.length)
      b.categories = [...new Set([...(b.categories ?? []), ...c.categories])].sort();
  };
  /** `target` gains company `c`: its id, description and links (when it has none), where OSM maps it, its hosts nobody holds */
  const absorb = (target: Brand, c: Candidate, hosts: string[]) => {
    if (!target.wikidata) {
      target.wikidata = c.qid;
      if (c.description) target.description = c.description;
      if (Object.keys(c.links).length) target.links = c.links;
      target.sources = [...target.sources, NSI_SOURCE];
      byQid.set(c.qid, target);
    }
    for (const n of c.nativeNames) if (!target.aliases.includes(n)) target.aliases.push(n);
    mapWhere(target, c);
    const added = hosts.filter(claim);
    for (const h of added) owned.set(h, target);
    target.domains = [...target.domains, ...added];
    return added;
  };
  for (const c of candidates) {
    const hosts = won.get(c.qid) ?? [];
    let target = byQid.get(c.qid);
    let how = "wikidata id";
    if (!target) {
      const hit = hosts.map((h) => owned.get(h)).find((b) => b !== undefined);
      if (hit && !hit.wikidata) {
        target = hit;
        how = "domain";
      } else if (hit) {
        report.push(
          `${c.name} (${c.qid}): domain owned by ${hit.slug}, which already has ${hit.wikidata}; skipped`,
        );
        continue;
      }
    }
    if (!target) {
      // a thesvg brand holding this company's slug is this company: thesvg-merge.ts gives an
      // icon a directory slug only when its website is one of the company's domains
      const base = directorySlug(c.name);
      const own = [`${base}-${c.qid.toLowerCase()}`, base]
        .map((s) => bySlug.get(s))
        .find((b) => b && !b.wikidata && b.sources.length === 1 && b.sources[0] === "thesvg");
      if (own) {
        target = own;
        how = "slug";
      }
    }
    if (!target) {
      const same = (byName.get(compactKey(c.name)) ?? []).filter(
        (b) => !b.wikidata && !byDomainOnly.has(b.slug) && nameMergeAgrees(b, hosts, c.areas),
      );
      if (same.length === 1) {
        target = same[0];
        how = "name";
      }
    }
    if (!target && c.logo) {
      // the same brand under a second Wikidata item (Shell plc and Shell's fuel stations, Lidl
      // Bulgaria): same name and the same logo file on Commons, as Wikidata states it; its
      // websites become the brand's alias domains
      const same = (byName.get(compactKey(c.name)) ?? []).filter(
        (b) => b.wikidata && logoOf.get(b.wikidata) === c.logo,
      );
      if (same.length === 1) {
        target = same[0];
        how = "the same name and Wikidata logo";
      }
    }
    if (target) {
      const added = absorb(target, c, hosts);
      merged++;
      report.push(
        `${c.name} (${c.qid}) merged into ${target.slug} by ${how}${added.length ? `, +${added.join(" ")}` : ""}`,
      );
      continue;
    }
    const mine = hosts.filter(claim);
    if (!mine.length) {
      if (hosts.length || c.hosts.length) {
        report.push(`${c.name} (${c.qid}): no domain of its own left; skipped`);
      }
      continue;
    }
    let slug = directorySlug(c.name) || c.qid.toLowerCase();
    if (slugs.has(slug)) {
      const namesake = brands.find((b) => b.slug === slug);
      report.push(
        `${c.name} (${c.qid}): namesake of ${namesake ? namesake.slug : retired.has(slug) ? `the retired slug ${slug}` : "a directory entry"}; slug ${slug}-${c.qid.toLowerCase()}`,
      );
      slug = `${slug}-${c.qid.toLowerCase()}`;
    }
    slugs.add(slug);
    const entry: Omit<Brand, "id"> = {
      slug,
      name: c.name,
      brandColor: null,
      darkModeColor: null,
      contrastTextColor: null,
      colors: [],
      aliases: [
        ...c.otherNames.filter((n) => compactKey(n) !== compactKey(c.name)),
        ...c.nativeNames,
      ],
      domains: mine,
      sourceUrl: c.links.website ?? null,
      guidelinesUrl: null,
      sources: [NSI_SOURCE],
      variants: {},
      verifiedAt: null,
      wikidata: c.qid,
      ...(c.description ? { description: c.description } : {}),
      ...(Object.keys(c.links).length ? { links: c.links } : {}),
    };
    mapWhere(entry, c);
    entries.push(entry);
    for (const h of mine) owned.set(h, entry as Brand);
    byQid.set(c.qid, entry as Brand);
  }
  // 4. an entry named like an icon-set brand joins it on evidence they are one company; every
  // decision is taken on the brands as the merge left them, before any join adds to them
  const candidateOf = new Map(candidates.map((c) => [c.qid, c]));
  const used = new Set<string>();
  const decisions = entries.map((e) => {
    const c = candidateOf.get(e.wikidata as string) as Candidate;
    const same = byName.get(compactKey(e.name)) ?? [];
    if (!same.length) return null;
    const decision = decideJoin(
      c.qid,
      same.map((b) => ({
        ...b,
        itemHosts: candidateOf.get(b.wikidata ?? "")?.hosts ?? [],
      })),
      { ...c, domains: e.domains, areas: c.areas ?? [] },
      joins,
      used,
    );
    if (decision.note) report.push(`${c.name} (${c.qid}): ${decision.note}`);
    return decision.into && decision.why
      ? { c, into: bySlug.get(decision.into) as Brand, why: decision.why }
      : null;
  });
  const joined: Join[] = [];
  const kept = entries.filter((e, i) => {
    const d = decisions[i];
    if (!d) return true;
    const { c, into, why } = d;
    for (const h of e.domains) owned.delete(h);
    const added = absorb(into, c, e.domains);
    // what found the entry finds the brand
    const names = new Set([into.name, ...into.aliases].map(compactKey));
    for (const a of e.aliases) {
      if (names.has(compactKey(a))) continue;
      into.aliases.push(a);
      names.add(compactKey(a));
    }
    joined.push({ qid: c.qid, name: c.name, slug: e.slug, into: into.slug, why });
    report.push(
      `${c.name} (${c.qid}) joined into ${into.slug} (instead of an entry ${e.slug})${added.length ? `, +${added.join(" ")}` : ""}: ${why}`,
    );
    return false;
  });
  for (const key of unusedJoins(joins, used))
    report.push(`directory-joins.json: ${key} decided nothing`);
  return { entries: kept, merged, joined, report, candidates: candidates.length };
}
