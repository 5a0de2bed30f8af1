/**
 * Catalog search: MiniSearch (a radix-tree index with prefix and fuzzy lookup and BM25+
 * scores) finds the candidates; a small tiering on top orders them the way a user expects:
 *
 *   0 exact      slug, name, alias or domain equals the query (also ignoring spaces, dots and
 *                dashes: "vs code" = "VSCode"), or a short form of a multi-word name does
 *                ("vscode", "gdrive", "aws"), or a domain without its suffix does ("chatgpt");
 *                name or slug first, then alias, short form, domain
 *   1 prefix     a name, alias, slug or domain starts with the query
 *   2 word       a later word of a multi-word name starts with the query ("drive" -> Google Drive)
 *   3 typo/words every query word matches a word of the brand, each within its typo budget
 *                (one edit from 4 characters, two from 8; an edit inserts, deletes or
 *                replaces a character or swaps two neighbouring ones)
 *
 * Within a tier: closer first (fewer characters left over, fewer edits), then the MiniSearch
 * score, then the shorter name, then the lower id, so equal input always gives equal output.
 * Crypto tokens (brands only @web3icons/core has) come after the other brands of the exact
 * tier (a query naming a company finds the company before a token of the same name: "atari",
 * "kraken") and are never typo matches ("unicef" is not the Unidef token).
 */
import MiniSearch, { type Query, type SearchOptions, type SearchResult } from "minisearch";
import { parse } from "tldts";
import { transliterate } from "transliteration";
import { collectGarbage } from "../../platform/memory";
import { frozenCache } from "../frozen";
import { hasArtwork } from "../service";
import type { Brand } from "../types";
import { FuzzyLexicon } from "./fuzzy";
import {
  abbreviations,
  compact,
  deletions,
  fold,
  normalizeQuery,
  swaps,
  typoBudget,
  typoDistance,
  wordParts,
  wordTails,
} from "./text";

export interface SearchableCatalog {
  all(): readonly Brand[];
  /** called with no argument after a full reload, with the brand after a single update */
  onChange(listener: (updated?: Brand) => void): void;
}

interface Entry {
  brand: Brand;
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

/** What the index holds for a brand (to skip re-indexing when only colors changed). */
function sameIndexed(a: Entry, b: Entry): boolean {
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return a.brand.slug === b.brand.slug && same(a.names, b.names) && same(a.domains, b.domains);
}

/** The source label of @web3icons/core (scripts/catalog/web3icons.ts): crypto tokens and chains. */
const TOKEN_SOURCE = "web3icons";

/** Brands from which a rebuild collects garbage between its phases (the directory has 20,000). */
const LARGE = 5000;

export interface Doc {
  id: number;
  text: string;
  compact: string;
  domains: string;
}

interface Hit {
  entry: Entry;
  score: number;
  edits: number;
}

interface Ranked extends Hit {
  tier: number;
  closeness: number;
}

/** "chatgpt.com" -> "chatgpt", "drive.google.com" -> "drivegoogle" */
function hostName(domain: string): string {
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
  return brand.sources.length + (brand.domains.length ? 1 : 0) + (hasArtwork(brand) ? 1 : 0);
}

function toEntry(brand: Brand): Entry {
  const names = [...new Set([brand.name, ...brand.aliases].map(fold).filter(Boolean))];
  const compacts = [...new Set([...names.map(compact), brand.slug].filter(Boolean))];
  const domains = brand.domains.map((d) => d.toLowerCase());
  return {
    brand,
    names,
    compacts,
    domains,
    // initials only for brands with artwork: thousands of directory entries would
    // turn every short query into some local chain's initials ("bbc" Burn Boot Camp)
    abbreviations: hasArtwork(brand) ? [...new Set(names.flatMap(abbreviations))] : [],
    hostNames: domains.map(hostName).filter(Boolean),
    tails: names.flatMap(wordTails),
    tickers: (brand.tickers ?? []).map(fold),
    popularity: popularityOf(brand),
    token: brand.sources.length === 1 && brand.sources[0] === TOKEN_SOURCE,
  };
}

/** The strings that find an entry exactly: names, compact names, short forms, domains, tickers. */
const exactKeys = (e: Entry) =>
  new Set([
    ...e.names,
    ...e.compacts,
    ...e.abbreviations,
    ...e.domains,
    ...e.hostNames,
    ...e.tickers,
  ]);

function toDoc(id: number, e: Entry): Doc {
  // a directory entry (no artwork) is indexed by its display name and domains only
  // (its other names still match exactly, see `exact`): ~15,000 entries' aliases and word
  // parts would double the index's memory
  const full = hasArtwork(e.brand);
  const words = new Set<string>();
  for (const name of full ? e.names : e.names.slice(0, 1)) {
    for (const word of name.split(" ")) {
      words.add(word);
      words.add(compact(word));
      if (full) for (const part of wordParts(word)) words.add(part);
    }
  }
  words.delete("");
  return {
    id,
    text: [...words].join(" "),
    compact: (full ? e.compacts : e.compacts.slice(0, 1)).join(" "),
    domains: e.domains.join(" "),
  };
}

/** Tokens are prepared in toDoc(); the index only splits on the spaces put there. */
const splitSpaces = (s: string) => s.split(" ").filter(Boolean);
const keep = (term: string) => term;

const OPTIONS: SearchOptions = { tokenize: splitSpaces, processTerm: keep };

/**
 * Typo terms: a map from every indexed word of 6+ characters, and from each form of it with
 * one character deleted, to the word. Looking up a string and its one-deletion forms finds
 * every indexed word within one Levenshtein edit of it (symmetric deletion), in a few map
 * lookups.
 */
function nearbyMap(words: Iterable<string>): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const w of words) {
    if ([...w].length < 6) continue; // nothing shorter is within 2 edits of an 8+ word
    for (const key of new Set([w, ...deletions(w)])) {
      const list = map.get(key);
      if (list) list.push(w);
      else map.set(key, [w]);
    }
  }
  return map;
}

/** The part of MiniSearch's term index that fuzzy lookups use (`MiniSearch#_index`). */
interface TermIndex {
  keys(): Iterable<string>;
  get(term: string): unknown;
  fuzzyGet(term: string, maxDistance: number): Map<string, [unknown, number]>;
}

/**
 * Answer the index's fuzzy lookups from a FuzzyLexicon of its terms: the same matches and
 * distances, so the same scores, in a fraction of the time (fuzzy.ts). MiniSearch is pinned by
 * the lockfile; tests/catalog/search/fuzzy.test.ts compares both answers over the catalog's queries.
 */
export function useLexicon(index: MiniSearch<Doc>): void {
  const terms = (index as unknown as { _index: TermIndex })._index;
  const lexicon = new FuzzyLexicon(terms.keys());
  terms.fuzzyGet = (term, max) => {
    const out = new Map<string, [unknown, number]>();
    for (const [word, d] of lexicon.within(term, max)) out.set(word, [terms.get(word), d]);
    return out;
  };
}

/** Fields in which a term may match with typos (domains match only exactly or as a prefix). */
const TYPO_FIELDS = new Set(["text", "compact"]);

/**
 * Sum over query terms of the fewest edits to a matched indexed term (0 for a prefix), or null
 * when a query term matched nothing within its typo budget (see typoDistance).
 */
function editsWithinBudget(queryTerms: string[], r: SearchResult): number | null {
  let total = 0;
  for (const q of queryTerms) {
    const budget = typoBudget(q);
    let best = budget + 1;
    for (const [d, fields] of Object.entries(r.match)) {
      const e = d.startsWith(q)
        ? 0
        : fields.some((f) => TYPO_FIELDS.has(f))
          ? typoDistance(q, d, budget)
          : budget + 1;
      if (e < best) best = e;
      if (best === 0) break;
    }
    if (best > budget) return null;
    total += best;
  }
  return total;
}

function minLeftover(keys: string[], prefix: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (const k of keys)
    if (k.startsWith(prefix) && k.length - prefix.length < best) best = k.length - prefix.length;
  return best;
}

function classify(
  e: Entry,
  q: string,
  qc: string,
  host: string,
): { tier: number; closeness: number } {
  if (e.names[0] === q || e.brand.slug === q || e.compacts[0] === qc)
    return { tier: 0, closeness: 0 };
  if (e.names.includes(q) || e.compacts.includes(qc)) return { tier: 0, closeness: 1 };
  if (e.abbreviations.includes(qc) || e.tickers.includes(q)) return { tier: 0, closeness: 2 };
  if (e.domains.includes(q) || e.domains.includes(host) || e.hostNames.includes(qc))
    return { tier: 0, closeness: 3 };
  // a prefix of the brand's own name before a prefix of an alias or a domain
  const own = Math.min(
    minLeftover(e.names.slice(0, 1), q),
    qc ? minLeftover(e.compacts.slice(0, 1), qc) : Number.POSITIVE_INFINITY,
  );
  if (own < Number.POSITIVE_INFINITY) return { tier: 1, closeness: own };
  const prefix = Math.min(
    minLeftover(e.names, q),
    minLeftover(e.domains, q),
    qc ? minLeftover(e.compacts, qc) : Number.POSITIVE_INFINITY,
  );
  if (prefix < Number.POSITIVE_INFINITY) return { tier: 1.5, closeness: prefix };
  const word = minLeftover(e.tails, q);
  if (word < Number.POSITIVE_INFINITY) return { tier: 2, closeness: word };
  // typo matches: the brand whose own name is fewest edits from the query first ("amazn"
  // Amazon, not Amazon MQ; "microsft" Microsoft, not Windows, whose alias it matched)
  return { tier: 3, closeness: typoDistance(qc, e.compacts[0] ?? "", 3) };
}

/**
 * Within a prefix or word tier: popularity counts against how much of the name is left over
 * (two characters left over weigh one source), so "amaz" finds Amazon before Amazon Web
 * Services and "micr" Microsoft before Micro.
 */
const standing = (r: Ranked) => r.entry.popularity - r.closeness / 2;

function compareRanked(a: Ranked, b: Ranked): number {
  return (
    a.tier - b.tier ||
    (a.tier === 0 ? Number(a.entry.token) - Number(b.entry.token) : 0) ||
    (a.tier === 3
      ? a.edits - b.edits || a.closeness - b.closeness || b.entry.popularity - a.entry.popularity
      : 0) ||
    (a.tier > 0 && a.tier < 3 ? standing(b) - standing(a) : 0) ||
    a.closeness - b.closeness ||
    b.score - a.score ||
    a.entry.brand.name.length - b.entry.brand.name.length ||
    a.entry.brand.id - b.entry.brand.id
  );
}

/** What a full build of the index makes from a list of brands. */
interface Built {
  entries: Map<number, Entry>;
  exact: Map<string, number[]>;
  index: MiniSearch<Doc>;
  /** every indexed term */
  vocabulary: Set<string>;
  /** see nearbyMap */
  nearby: Map<string, string[]>;
}

function newIndex() {
  return new MiniSearch<Doc>({
    fields: ["text", "compact", "domains"],
    tokenize: splitSpaces,
    processTerm: keep,
  });
}

/**
 * A full build. `previous` entries whose brand is the same object are kept (an entry depends on
 * its brand alone): a rebuild after one brand changed derives one entry, not 20,000.
 */
function build(brands: readonly Brand[], previous?: Map<number, Entry>): Built {
  const entries = new Map<number, Entry>();
  for (const b of brands) {
    const before = previous?.get(b.id);
    entries.set(b.id, before?.brand === b ? before : toEntry(b));
  }
  const exact = new Map<string, number[]>();
  for (const [id, e] of entries) {
    for (const key of exactKeys(e)) {
      const ids = exact.get(key);
      if (ids) ids.push(id);
      else exact.set(key, [id]);
    }
  }
  // a directory-size catalog: the garbage so far (entries, domain map) goes before MiniSearch
  // allocates its index, and MiniSearch's before the word maps (else RSS peaks ~75 MB higher)
  const large = entries.size >= LARGE;
  if (large) collectGarbage();
  const docs = [...entries].map(([id, e]) => toDoc(id, e));
  const index = newIndex();
  index.addAll(docs);
  useLexicon(index);
  if (large) collectGarbage();
  // typo neighbours of the words of brands with artwork only: the directory's ~15,000
  // entries would take most of the start-up time and memory for a rarely used
  // path (a swap and one more edit); their typos still match through MiniSearch's fuzzy lookup
  // (both sets filled word by word: no array of all words is made)
  const vocabulary = new Set<string>();
  const artworkWords = new Set<string>();
  for (const d of docs) {
    const artwork = hasArtwork(entries.get(d.id)?.brand ?? { variants: {} });
    for (const word of splitSpaces(d.domains)) vocabulary.add(word);
    for (const field of [d.text, d.compact])
      for (const word of splitSpaces(field)) {
        vocabulary.add(word);
        if (artwork) artworkWords.add(word);
      }
  }
  return { entries, exact, index, vocabulary, nearby: nearbyMap(artworkWords) };
}

/** shared between indexes over the same frozen brands (frozen.ts): a second of CPU each */
const frozenBuilds = frozenCache<Built>();

export class SearchIndex {
  private entries = new Map<number, Entry>();
  private exact = new Map<string, number[]>();
  private index = newIndex();
  /** every indexed term */
  private vocabulary = new Set<string>();
  /** see nearbyMap */
  private nearby = new Map<string, string[]>();
  /** the frozen brands whose shared build this index uses (frozen.ts), else null */
  private sharedFrom: readonly Brand[] | null = null;
  /** the entries of a shared build were copied (ownEntries) */
  private entriesOwned = false;
  /** bumped whenever the results of some query may have changed (see SearchResponses) */
  generation = 0;

  /**
   * true until the index is built: it is built on first use, not at start-up (about 1 s of CPU
   * for the 20,000 brands with the directory), and again on first use after a reload
   */
  private stale = true;

  constructor(private catalog: SearchableCatalog) {
    catalog.onChange((updated) => {
      if (!updated) this.stale = true;
      else if (!this.stale) this.refresh(updated);
    });
  }

  get size() {
    this.ready();
    return this.entries.size;
  }

  /** Build the index now if it is not current (a warm-up after start, or the first search). */
  ready() {
    if (this.stale) this.rebuild();
  }

  /** Re-index the whole catalog (after a reload). */
  rebuild() {
    this.stale = false;
    this.generation++;
    const brands = this.catalog.all();
    const { value, shared } = frozenBuilds.get(brands, (b) => build(b, this.entries));
    this.use(value);
    this.sharedFrom = shared ? [...brands] : null;
    this.entriesOwned = false;
  }

  private use(built: Built) {
    this.entries = built.entries;
    this.exact = built.exact;
    this.index = built.index;
    this.vocabulary = built.vocabulary;
    this.nearby = built.nearby;
  }

  /**
   * Before adding to a shared build: a build of this index's own, of the same brands, keeping
   * the entries refreshed since (their searched fields are unchanged: see ownEntries).
   */
  private own() {
    if (!this.sharedFrom) return;
    const refreshed = this.entriesOwned ? this.entries : null;
    this.use(build(this.sharedFrom, this.entries));
    if (refreshed) this.entries = refreshed;
    this.sharedFrom = null;
  }

  /** Before replacing an entry of a shared build: a copy of the entries of this index's own. */
  private ownEntries() {
    if (!this.sharedFrom || this.entriesOwned) return;
    this.entries = new Map(this.entries);
    this.entriesOwned = true;
  }

  /** One brand changed: keep its new record; re-index only when a searched field changed. */
  refresh(brand: Brand) {
    const before = this.entries.get(brand.id);
    const after = toEntry(brand);
    if (!before) return this.add(brand.id, after);
    if (before && sameIndexed(before, after)) {
      this.ownEntries();
      this.entries.set(brand.id, after);
      if (before.popularity !== after.popularity) this.generation++; // ranking changed
    } else this.rebuild();
  }

  /**
   * A brand new to the catalog (a discovered brand), indexed on its own: exact keys, the full
   * text index and the vocabulary (its words get typo matches through the index's fuzzy
   * lookup, not the precomputed neighbours of a full build).
   */
  private add(id: number, e: Entry) {
    this.own();
    this.entries.set(id, e);
    for (const key of exactKeys(e)) {
      const ids = this.exact.get(key);
      if (ids) ids.push(id);
      else this.exact.set(key, [id]);
    }
    const doc = toDoc(id, e);
    this.index.add(doc);
    for (const field of [doc.text, doc.compact, doc.domains])
      for (const word of splitSpaces(field)) this.vocabulary.add(word);
    this.generation++;
  }

  /** Best matches first, at most `limit`. `query` is normalized here again (idempotent). */
  search(query: string, limit: number): Brand[] {
    this.ready();
    const found = this.searchFolded(query, limit);
    // a query in another script that matched nothing: try its Latin transliteration
    // ("Яндекс" -> "yandeks", one typo from Yandex)
    if (found.length || !/[^\p{Script=Latin}\p{N}\p{P}\p{S}\s]/u.test(query)) return found;
    const latin = transliterate(normalizeQuery(query));
    return latin && latin !== query ? this.searchFolded(latin, limit) : found;
  }

  private searchFolded(query: string, limit: number): Brand[] {
    const q = fold(normalizeQuery(query));
    const qc = compact(q);
    const host = q.replace(/^www\./, "");
    const terms = splitSpaces(q);
    if (!q) return [];

    const hits = new Map<number, Hit>();
    const add = (id: number, score: number, edits: number) => {
      const entry = this.entries.get(id);
      if (!entry) return;
      const h = hits.get(id);
      if (!h) hits.set(id, { entry, score, edits });
      else {
        h.score = Math.max(h.score, score);
        h.edits = Math.min(h.edits, edits);
      }
    };

    for (const key of new Set([q, qc, host]))
      for (const id of this.exact.get(key) ?? []) add(id, 0, 0);
    const collect = (results: SearchResult[], queryTerms: string[]) => {
      for (const r of results) {
        const edits = editsWithinBudget(queryTerms, r);
        if (edits !== null) add(r.id, r.score, edits);
      }
    };
    if (terms.length === 1 && qc === q) {
      // one plain word: a single lookup over names, compact names and domains
      collect(this.index.search(this.wordQuery(q), OPTIONS), terms);
    } else {
      // every word somewhere in the names or domains, in any order, each with its own typos ...
      // (a word with punctuation, like "next.js", only as a prefix: its typos are caught below)
      // a one-letter word ("google d", as an autocomplete box sends it) would expand to every
      // indexed word with that letter (~5,000 terms, 14 ms): it is searched without, and each
      // match must then have a word that starts with that letter
      const letters = terms.filter((t) => [...t].length < 2);
      const longer =
        letters.length && letters.length < terms.length
          ? terms.filter((t) => [...t].length >= 2)
          : terms;
      const words: Query = {
        combineWith: "AND",
        queries: longer.map((t) => this.wordQuery(t, /^[\p{L}\p{N}]+$/u.test(t))),
      };
      let found = this.index.search(words, { ...OPTIONS, fields: ["text", "domains"] });
      if (longer !== terms)
        found = found.filter((r) => {
          const entry = this.entries.get(r.id);
          if (!entry) return false;
          const d = toDoc(r.id, entry);
          const indexed = splitSpaces(`${d.text} ${d.domains}`);
          return letters.every((l) => indexed.some((w) => w.startsWith(l)));
        });
      collect(found, longer);
      // ... or the whole query without spaces and punctuation ("vs code" -> "vscode")
      if ([...qc].length >= 2) {
        const whole = terms.length === 1 ? this.wordQuery(qc) : { queries: [qc], prefix: true };
        collect(this.index.search(whole, { ...OPTIONS, fields: ["compact"] }), [qc]);
      }
    }

    const ranked: Ranked[] = [];
    for (const h of hits.values()) {
      const r = { ...h, ...classify(h.entry, q, qc, host) };
      if (!(r.tier === 3 && r.entry.token)) ranked.push(r);
    }
    ranked.sort(compareRanked);
    return ranked.slice(0, limit).map((r) => r.entry.brand);
  }

  /**
   * One query word as a MiniSearch query: the word as a prefix or within its budget of
   * Levenshtein edits (MiniSearch's fuzzy lookup), or one of the indexed words that a swap of
   * two neighbouring characters brings into budget (exact lookups). MiniSearch's fuzzy lookup
   * charges a swap two edits, and widening its radius for that is several times slower.
   */
  private wordQuery(term: string, typos = true): Query {
    const budget = typos ? typoBudget(term) : 0;
    const self: Query = { queries: [term], prefix: true, fuzzy: budget };
    if (!budget) return self;
    const found = new Set<string>();
    for (const swapped of swaps(term)) {
      if (this.vocabulary.has(swapped)) found.add(swapped);
      if (budget < 2) continue;
      // a swap and one more edit: another swap, or a Levenshtein edit (nearby words)
      for (const again of swaps(swapped)) if (this.vocabulary.has(again)) found.add(again);
      for (const key of [swapped, ...deletions(swapped)])
        for (const w of this.nearby.get(key) ?? []) found.add(w);
    }
    return found.size ? { combineWith: "OR", queries: [self, { queries: [...found] }] } : self;
  }
}
