/**
 * Build step 5, enrich: domains for every brand (scripts/catalog/domains.ts, with the curated
 * domain and legacy-domain fixtures), then the brand directory from name-suggestion-index
 * (scripts/catalog/nsi.ts): its companies merged into catalog brands or added as entries
 * without artwork.
 */

import type { Brand } from "../../../src/catalog/built-catalog";
import { assignDomains, type DomainOverrides, type DomainReport } from "../domains";
import type { DraftBrand } from "../icon-sets";
import { buildDirectory, type Candidate, type DirectoryResult } from "../nsi";
import { loadRedirects } from "../redirects";
import { THESVG_SOURCE } from "../thesvg";
import { attachTickers, loadListedCompanies, type TickerResult } from "../tickers";
import { WEB3_SOURCE } from "../web3icons";
import type { BuildPaths, Phase } from "./context";
import type { Fixtures } from "./load";
import { idsFor } from "./normalise";

/** domain-overrides.json with every legacy/corporate domain of legacy-domains.json added. */
export function domainOverrides(fixtures: Pick<Fixtures, "domains" | "legacy">): DomainOverrides {
  const overrides: DomainOverrides = structuredClone(fixtures.domains);
  for (const [slug, entries] of Object.entries(fixtures.legacy)) {
    if (slug === "$comment") continue;
    overrides[slug] = [...new Set([...(overrides[slug] ?? []), ...Object.keys(entries)])];
  }
  return overrides;
}

/** Fills `brands[].domains` (mutated). */
export function enrichDomains(
  brands: Brand[],
  drafts: DraftBrand[],
  fixtures: Pick<Fixtures, "domains" | "legacy">,
): DomainReport {
  const draftBySlug = new Map(drafts.map((d) => [d.slug, d]));
  const { domains, report } = assignDomains(
    brands.map((b) => {
      const d = draftBySlug.get(b.slug);
      return {
        id: b.id,
        slug: b.slug,
        keys: d?.keys ?? new Set([b.slug]),
        fromSimpleIcons: b.sources.includes("simple-icons"),
        sourceUrl: b.sourceUrl,
        otherUrls: [b.guidelinesUrl, ...(d?.extraUrls ?? [])].filter((u): u is string => !!u),
      };
    }),
    domainOverrides(fixtures),
  );
  for (const b of brands) b.domains = domains.get(b.slug) ?? [];
  return report;
}

/**
 * Legacy/corporate domains of directory entries (the fixture's slugs not among the icon-set
 * brands), added where no other brand holds the domain. Mutates the entries.
 */
export function addLegacyDomains(
  brands: Brand[],
  entries: { slug: string; domains: string[] }[],
  legacy: Fixtures["legacy"],
): void {
  const held = new Set(brands.flatMap((b) => b.domains));
  for (const e of entries) {
    for (const domain of Object.keys(legacy[e.slug] ?? {})) {
      if (held.has(domain)) continue;
      e.domains.push(domain);
      held.add(domain);
    }
  }
}

/**
 * Brands the directory joins only by a shared domain, never by name: those that come from
 * @thesvg/icons alone. Its icons are often products named like unrelated companies (Adobe's
 * Animate and the Japanese retailer Animate, Saudi Arabia's stc and the Swedish gym chain STC),
 * and a domain label match is too weak to tell them apart. (A thesvg brand that took a
 * company's directory slug by its website is that company: nsi.ts merges it by slug.)
 */
export function directoryByDomainOnly(drafts: DraftBrand[]): Set<string> {
  return new Set(
    drafts
      .filter(
        (d) => d.sources.size === 1 && (d.sources.has(THESVG_SOURCE) || d.sources.has(WEB3_SOURCE)),
      )
      .map((d) => d.slug),
  );
}

export interface Enriched {
  domains: DomainReport;
  directory: DirectoryResult;
  tickers: TickerResult;
}

/** Domains, then the directory; directory entries are appended to `brands` with new ids. */
export function enrich(
  paths: BuildPaths,
  brands: Brand[],
  drafts: DraftBrand[],
  ids: Record<string, number>,
  fixtures: Fixtures,
  phase: Phase,
  candidates?: Candidate[],
): Enriched {
  const report = enrichDomains(brands, drafts, fixtures);
  phase(
    "domains",
    `${report.domains} domains on ${report.brandsWithDomain} brands, ${report.contested.length} contested`,
  );
  const retired = new Set(Object.keys(loadRedirects(paths.root)));
  const directory = buildDirectory(
    paths.root,
    brands,
    fixtures.directoryParents,
    directoryByDomainOnly(drafts),
    candidates,
    retired,
    fixtures.directoryJoins,
  );
  const withDirectory = idsFor(
    paths.idsFile,
    directory.entries.map((e) => e.slug),
    ids,
  );
  for (const e of directory.entries) brands.push({ id: withDirectory.ids[e.slug] as number, ...e });
  addLegacyDomains(brands, directory.entries, fixtures.legacy);
  const tickers = attachTickers(brands, loadListedCompanies(paths.root), retired);
  const withTickers = idsFor(
    paths.idsFile,
    tickers.entries.map((e) => e.slug),
    withDirectory.ids,
  );
  for (const e of tickers.entries) brands.push({ id: withTickers.ids[e.slug] as number, ...e });
  phase(
    "directory",
    `${directory.candidates} name-suggestion-index companies: ${directory.merged} merged into catalog brands, ${directory.entries.length} directory entries (${withDirectory.added.length} new ids); ` +
      `listed companies: ${tickers.byDomain} by domain, ${tickers.byName} by name, ${tickers.entries.length} new entries, ${tickers.unmatched} left out`,
  );
  return { domains: report, directory, tickers };
}
