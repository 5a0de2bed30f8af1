/**
 * Listed companies and their tickers (fixtures/listed-companies.json, generated from
 * pytickersymbols by scripts/catalog/listed-companies.py): each company's tickers become
 * `Brand.tickers` of the brand it is, so that "AAPL", "NASDAQ:AAPL" or "7203.T" finds it.
 *
 * A company is the brand that holds its website's host or registrable domain, else the one
 * brand whose name is the company's name without its legal form ("Apple Inc." -> Apple);
 * a company matching neither, with a website nobody holds, becomes a directory entry.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { registrableDomain } from "../../src/catalog/brand/domain";
import type { Brand } from "../../src/catalog/built-catalog";
import { compactKey } from "./keys";
import { directorySlug } from "./nsi";

export const TICKERS_SOURCE = "pytickersymbols";

export interface ListedCompany {
  name: string;
  /** host without www., or null */
  website: string | null;
  country: string | null;
  symbol: string;
  /** Yahoo symbols ("AAPL", "7203.T") and Google's exchange-qualified forms ("NASDAQ:AAPL") */
  tickers: string[];
}

export function loadListedCompanies(root: string): ListedCompany[] {
  return JSON.parse(readFileSync(join(root, "fixtures", "listed-companies.json"), "utf8"))
    .companies;
}

const LEGAL_FORMS =
  /[\s,]+(inc|incorporated|corp|corporation|co|company|ltd|limited|plc|ag|se|sa|s\.a|nv|n\.v|asa|ab|oyj|spa|s\.p\.a|& co|kgaa|co\.,? ltd)\.?$/i;
const GROUP_WORDS = /[\s,]+(holdings?|group)\.?$/i;

/**
 * "Apple Inc." -> "Apple", "Siemens Healthineers AG" -> "Siemens Healthineers"; with
 * `groups`, "Holdings" and "Group" go too (for matching: "NN Group" is the brand NN Group, but
 * "American International Group" keeps its name as a directory entry).
 */
export function withoutLegalForm(name: string, groups = false): string {
  let n = name.trim();
  for (let i = 0; i < 3; i++) {
    let next = n.replace(LEGAL_FORMS, "").trim();
    if (groups) next = next.replace(GROUP_WORDS, "").trim();
    // "Eli Lilly and Company" -> "Eli Lilly", not "Eli Lilly and"
    next = next.replace(/\s+(and|&)$/i, "").trim();
    if (next === n || !next) break;
    n = next;
  }
  return n;
}

/**
 * The one brand a company is by name, or undefined. Without a website only the full name
 * counts ("Kroger", not "Alamo Group" for Alamo the car rental); with one, the name without its
 * legal form, on a brand whose domains share the website's registrable domain or, without
 * domains, whose name is the website's label.
 */
function namesakeFree(
  c: ListedCompany,
  site: string | null,
  byName: Map<string, Brand[]>,
): Brand | undefined {
  if (!site) {
    const named = (byName.get(compactKey(c.name)) ?? []).filter(
      (b) => compactKey(b.name) === compactKey(c.name),
    );
    return named.length === 1 ? named[0] : undefined;
  }
  const label = compactKey(site.slice(0, site.indexOf(".")));
  const named = byName.get(compactKey(withoutLegalForm(c.name, true))) ?? [];
  const same = named.filter((b) =>
    b.domains.length
      ? b.domains.some((d) => registrableDomain(d) === site)
      : compactKey(b.name) === label,
  );
  return same.length === 1 ? same[0] : undefined;
}

export interface TickerResult {
  byDomain: number;
  byName: number;
  /** new directory entries, without ids (the caller assigns them) */
  entries: Omit<Brand, "id">[];
  /** companies left out: no match and no website of their own */
  unmatched: number;
  report: string[];
}

/**
 * Adds tickers to `brands` (mutated) and returns the companies that become new entries, never
 * under a `retired` slug (one that redirects to another brand).
 */
export function attachTickers(
  brands: Brand[],
  companies: ListedCompany[],
  retired: ReadonlySet<string> = new Set(),
): TickerResult {
  const byDomain = new Map<string, Brand>();
  for (const b of brands) for (const d of b.domains) byDomain.set(d, b);
  const byName = new Map<string, Brand[]>();
  for (const b of brands) {
    for (const k of new Set([b.name, ...b.aliases].map(compactKey))) {
      if (k) byName.set(k, [...(byName.get(k) ?? []), b]);
    }
  }
  const slugs = new Set([...brands.map((b) => b.slug), ...retired]);
  const result: TickerResult = { byDomain: 0, byName: 0, entries: [], unmatched: 0, report: [] };
  for (const c of companies) {
    const site = c.website ? (registrableDomain(c.website) ?? c.website) : null;
    let brand = c.website
      ? (byDomain.get(c.website) ?? (site ? byDomain.get(site) : undefined))
      : undefined;
    let how = "domain";
    if (!brand) {
      const same = namesakeFree(c, site, byName);
      if (same) {
        brand = same;
        how = "name";
      }
    }
    if (brand) {
      brand.tickers = [...new Set([...(brand.tickers ?? []), ...c.tickers])];
      if (how === "domain") result.byDomain++;
      else result.byName++;
      result.report.push(`${c.symbol} ${c.name} -> ${brand.slug} by ${how}`);
      continue;
    }
    if (!c.website || !site || byDomain.has(site)) {
      result.unmatched++;
      result.report.push(`${c.symbol} ${c.name}: no brand and no website of its own; left out`);
      continue;
    }
    let slug = directorySlug(withoutLegalForm(c.name));
    if (!slug || slugs.has(slug)) slug = `${slug}-${directorySlug(c.symbol)}`;
    if (slugs.has(slug)) {
      result.unmatched++;
      result.report.push(`${c.symbol} ${c.name}: slug ${slug} taken; left out`);
      continue;
    }
    slugs.add(slug);
    const domains = [...new Set([c.website, site])].filter((d) => !byDomain.has(d));
    const entry: Omit<Brand, "id"> = {
      slug,
      name: withoutLegalForm(c.name),
      brandColor: null,
      darkModeColor: null,
      contrastTextColor: null,
      colors: [],
      aliases: withoutLegalForm(c.name) === c.name ? [] : [c.name],
      domains,
      sourceUrl: `https://${c.website}`,
      guidelinesUrl: null,
      sources: [TICKERS_SOURCE],
      variants: {},
      verifiedAt: null,
      tickers: c.tickers,
      links: { website: `https://${c.website}` },
    };
    for (const d of domains) byDomain.set(d, entry as Brand);
    result.entries.push(entry);
    result.report.push(`${c.symbol} ${c.name}: new directory entry ${slug}`);
  }
  return result;
}
