/**
 * What search knows of a brand (an Entry) and the rows it is found by, derived from the brand
 * alone: written into the catalog database with the brand (src/catalog/store/), read back for
 * the candidates of a query.
 */
import { parse } from "tldts";
import type { Brand } from "../built-catalog";
import { abbreviations, compact, deletions, fold, wordParts, wordTails } from "./text";

export interface Entry {
  id: number;
  slug: string;
  name: string;
  /** the brand has at least one stored SVG */
  artwork: boolean;
  /** folded name first, then folded aliases */
  names: string[];
  /** compact name, compact aliases, slug */
  compacts: string[];
  domains: string[];
  /** short forms of multi-word names ("vscode", "aws"), matched only exactly */
  abbreviations: string[];
  /** domains without their public suffix, compacted ("chatgpt.com" -> "chatgpt"), matched only exactly */
  hostNames: string[];
  tails: string[];
  /** stock tickers, folded ("aapl", "nasdaq:aapl", "7203.t"), matched only exactly */
  tickers: string[];
  /** popularity from the data: independent sources carrying the brand, plus one for a domain */
  popularity: number;
  /** a crypto token: a brand only the web3icons set has */
  token: boolean;
}

/** The source label of @web3icons/core (scripts/catalog/web3icons.ts): crypto tokens and chains. */
const TOKEN_SOURCE = "web3icons";

/** Fields of the term rows: words of the names, compact names and slug, domains. */
export const FIELD = { text: 0, compact: 1, domains: 2 } as const;

function hasArt(b: Pick<Brand, "variants">): boolean {
  for (const _ in b.variants) return true;
  return false;
}

/** A domain as search keys it: "chatgpt.com" -> "chatgpt", "drive.google.com" -> "drivegoogle" */
export function hostName(domain: string): string {
  const p = parse(domain, { allowPrivateDomains: true });
  return compact([p.subdomain, p.domainWithoutSuffix].filter(Boolean).join("."));
}

/**
 * How well known a brand is, from the data alone: the number of icon sets that carry it (a
 * famous brand is drawn by many: Microsoft, Kubernetes) plus one when it has a domain.
 */
export function popularityOf(brand: Brand): number {
  // one more for artwork: a directory entry (one source, no SVG) never outranks a namesake
  // brand with artwork and as many sources
  return brand.sources.length + (brand.domains.length ? 1 : 0) + (hasArt(brand) ? 1 : 0);
}

export function toEntry(brand: Brand): Entry {
  const names = [...new Set([brand.name, ...brand.aliases].map(fold).filter(Boolean))];
  const compacts = [...new Set([...names.map(compact), brand.slug].filter(Boolean))];
  const domains = brand.domains.map((d) => d.toLowerCase());
  const artwork = hasArt(brand);
  return {
    id: brand.id,
    slug: brand.slug,
    name: brand.name,
    artwork,
    names,
    compacts,
    domains,
    // initials only for brands with artwork: thousands of directory entries would
    // turn every short query into some local chain's initials ("bbc" Burn Boot Camp)
    abbreviations: artwork ? [...new Set(names.flatMap(abbreviations))] : [],
    hostNames: domains.map(hostName).filter(Boolean),
    tails: names.flatMap(wordTails),
    tickers: (brand.tickers ?? []).map(fold),
    popularity: popularityOf(brand),
    token: brand.sources.length === 1 && brand.sources[0] === TOKEN_SOURCE,
  };
}

/** The strings that find an entry exactly: names, compact names, short forms, domains, tickers. */
export const exactKeys = (e: Entry) =>
  new Set([
    ...e.names,
    ...e.compacts,
    ...e.abbreviations,
    ...e.domains,
    ...e.hostNames,
    ...e.tickers,
  ]);

/**
 * The indexed words of an entry by field. A directory entry (no artwork) is indexed by its
 * display name and domains only (its other names still match exactly, see exactKeys).
 */
export function termsOf(e: Entry): { text: string[]; compact: string[]; domains: string[] } {
  const words = new Set<string>();
  for (const name of e.artwork ? e.names : e.names.slice(0, 1)) {
    for (const word of name.split(" ")) {
      words.add(word);
      words.add(compact(word));
      if (e.artwork) for (const part of wordParts(word)) words.add(part);
    }
  }
  words.delete("");
  const split = (xs: string[]) => [...new Set(xs.flatMap((x) => x.split(" ")).filter(Boolean))];
  return {
    text: [...words],
    compact: split(e.artwork ? e.compacts : e.compacts.slice(0, 1)),
    domains: split(e.domains),
  };
}

/** Words shorter than this are never within a typo budget of a query word (budget needs 4). */
export const TYPO_MIN = 3;

/**
 * The keys a vocabulary word is found by in typo lookups: the word and, from 4 characters, each
 * form of it with one character deleted (symmetric deletion: a query word and its one- and
 * two-deletion forms looked up among these find the words within its typo budget).
 */
export function deletionKeys(word: string): string[] {
  return [...word].length < 4 ? [word] : [...new Set([word, ...deletions(word)])];
}
