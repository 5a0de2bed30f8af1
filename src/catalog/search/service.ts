/**
 * Catalog search over the catalog database (src/catalog/store/): the `exact` table, prefix
 * range scans of the `terms` table, and typo candidates from the `typo_keys` table (symmetric
 * deletion) and the `vocab` FTS5 trigram table find the candidates; a small tiering on top
 * orders them the way a user expects:
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
 * Within a tier: closer first (fewer characters left over, fewer edits), then the match score
 * (how much of the matched words the query covers), then the shorter name, then the lower id,
 * so equal input always gives equal output. Crypto tokens (brands only @web3icons/core has)
 * come after the other brands of the exact tier (a query naming a company finds the company
 * before a token of the same name: "atari", "kraken") and are never typo matches. Nothing is
 * built at start or on a request: the rows are written with each brand.
 */
import { transliterate } from "transliteration";
import { Lru } from "../../platform/cache";
import type { Brand } from "../built-catalog";
import type { CatalogDb, TermRow } from "../store/catalog-db";
import { type Entry, exactKeys, FIELD, termsOf, toEntry } from "./entry";
import {
  compact,
  deletions,
  fold,
  normalizeQuery,
  swaps,
  transliterationSpellings,
  typoBudget,
  typoDistance,
} from "./text";

export { popularityOf } from "./entry";

export interface SearchableCatalog {
  readonly loaded: boolean;
  readonly database: CatalogDb;
  brandById(id: number): Brand | undefined;
  /** ids of brands whose searched fields an operator pinned (read through brandById) */
  pinnedIds?(): Iterable<number>;
  /** called with no argument after a full reload, with the brand after a single update */
  onChange(listener: (updated?: Brand) => void): void;
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

/** One query word's matches: brand id -> fewest edits and best score. */
type Matches = Map<number, { edits: number; score: number }>;

const splitSpaces = (s: string) => s.split(" ").filter(Boolean);

/** Fields in which a word may match with typos (domains match only exactly or as a prefix). */
const TYPO_FIELDS = new Set<number>([FIELD.text, FIELD.compact]);
const ALL_FIELDS = new Set<number>([FIELD.text, FIELD.compact, FIELD.domains]);
const WORD_FIELDS = new Set<number>([FIELD.text, FIELD.domains]);
const COMPACT_FIELD = new Set<number>([FIELD.compact]);

/** Prefix rows read per database for a one-word query, and per word of a longer one. */
const PREFIX_ROWS = 800;
const PREFIX_ROWS_MULTI = 2000;
/** Candidates whose entries are read and ranked, at most. */
const MAX_RANKED = 150;
/** Words a substring lookup of the trigram table returns (typo candidates at two edits). */
const SUBSTRING_ROWS = 300;
/** Longest query word whose two-deletion forms are looked up (longer: substrings only). */
const MAX_DELETION_WORD = 24;

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
  if (e.names[0] === q || e.slug === q || e.compacts[0] === qc) return { tier: 0, closeness: 0 };
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
    (a.tier === 0 ? Number(a.entry.token === true) - Number(b.entry.token === true) : 0) ||
    (a.tier === 3
      ? a.edits - b.edits || a.closeness - b.closeness || b.entry.popularity - a.entry.popularity
      : 0) ||
    (a.tier > 0 && a.tier < 3 ? standing(b) - standing(a) : 0) ||
    a.closeness - b.closeness ||
    b.score - a.score ||
    a.entry.name.length - b.entry.name.length ||
    a.entry.id - b.entry.id
  );
}

/** What a matched word is worth: the share of it the query covers, less for typos. */
function weight(query: string, word: string, edits: number): number {
  const share = Math.min(1, query.length / Math.max(1, word.length));
  return edits ? share / (1 + edits) : share;
}

export class SearchIndex {
  /** bumped whenever the results of some query may have changed (see SearchResponses) */
  generation = 0;
  /** search entries of brands seen in recent queries */
  private entries = new Lru<number, Entry>(20_000);

  constructor(private catalog: SearchableCatalog) {
    catalog.onChange((updated) => {
      if (!updated) {
        this.entries.clear();
        this.generation++;
        return;
      }
      const before = this.entries.get(updated.id);
      this.entries.delete(updated.id);
      const after = this.entry(updated.id);
      // a brand whose searched fields and popularity stayed (colors, artwork added) changes no
      // ranking; anything else may
      if (!before || !after || !sameRanking(before, after)) this.generation++;
    });
  }

  /** Brands in the catalog. */
  get size() {
    return this.catalog.loaded ? this.catalog.database.size : 0;
  }

  /** Nothing to build: the index is the catalog database's tables. */
  ready() {}

  private get db(): CatalogDb {
    return this.catalog.database;
  }

  private entry(id: number): Entry | undefined {
    let e = this.entries.get(id);
    if (!e) {
      e = this.pinned().has(id) ? this.pinnedEntry(id) : this.db.entry(id);
      if (e) this.entries.set(id, e);
    }
    return e;
  }

  /** The pinned brands' ids (a few: operators set them). */
  private pinned(): Set<number> {
    return new Set(this.catalog.pinnedIds?.() ?? []);
  }

  /** A pinned brand's entry, made from the brand as readers see it (its pinned names). */
  private pinnedEntry(id: number): Entry | undefined {
    const b = this.catalog.brandById(id);
    return b ? toEntry(b) : undefined;
  }

  /** Best matches first, at most `limit`. `query` is normalized here again (idempotent). */
  search(query: string, limit: number): Brand[] {
    if (!this.catalog.loaded) return [];
    const found = this.searchFolded(query, limit);
    // a query in another script that matched nothing: its Latin transliteration, as a whole
    // name or alias only ("Яндекс" -> "yandeks" -> Yandex), never the start of a longer name
    if (found.length || !/[^\p{Script=Latin}\p{N}\p{P}\p{S}\s]/u.test(query)) return found;
    const latin = transliterate(normalizeQuery(query));
    return latin && latin !== query ? this.searchTransliterated(latin, limit) : found;
  }

  /**
   * The brands whose own name or an alias is one of the transliteration's spellings
   * (text.ts transliterationSpellings: "soni" is also "sony", "yandeks" "yandex"): exact only,
   * since a transliteration is a guess at the spelling and a prefix or a typo of a guess lands
   * on another brand ("soni" is the start of Sonic, "gugl" one typo from Gull). Own name before
   * alias, crypto tokens last, then the more popular brand, then the spelling as transliterated,
   * the shorter name, the lower id.
   */
  private searchTransliterated(latin: string, limit: number): Brand[] {
    const hits = new Map<number, { entry: Entry; own: boolean; rewrites: number }>();
    transliterationSpellings(latin).forEach((spelling, rewrites) => {
      const key = compact(spelling);
      for (const id of new Set([...this.db.exactIds(spelling), ...this.db.exactIds(key)])) {
        const entry = this.entry(id);
        if (!entry || hits.has(id)) continue;
        if (!entry.names.includes(spelling) && !entry.compacts.includes(key)) continue;
        const own = entry.names[0] === spelling || entry.compacts[0] === key || entry.slug === key;
        hits.set(id, { entry, own, rewrites });
      }
    });
    return [...hits.values()]
      .sort(
        (a, b) =>
          Number(b.own) - Number(a.own) ||
          Number(a.entry.token) - Number(b.entry.token) ||
          b.entry.popularity - a.entry.popularity ||
          a.rewrites - b.rewrites ||
          a.entry.name.length - b.entry.name.length ||
          a.entry.id - b.entry.id,
      )
      .slice(0, limit)
      .flatMap((h) => this.catalog.brandById(h.entry.id) ?? []);
  }

  private searchFolded(query: string, limit: number): Brand[] {
    const q = fold(normalizeQuery(query));
    const qc = compact(q);
    const host = q.replace(/^www\./, "");
    const terms = splitSpaces(q);
    if (!q) return [];

    const hits = new Map<number, { score: number; edits: number }>();
    const add = (id: number, score: number, edits: number) => {
      const h = hits.get(id);
      if (!h) hits.set(id, { score, edits });
      else {
        h.score = Math.max(h.score, score);
        h.edits = Math.min(h.edits, edits);
      }
    };
    const addAll = (m: Matches) => {
      for (const [id, { edits, score }] of m) add(id, score, edits);
    };

    for (const key of new Set([q, qc, host])) for (const id of this.db.exactIds(key)) add(id, 0, 0);
    // pinned names and aliases are not in the catalog's tables: the pinned brands are checked
    // here, each against its own entry
    for (const id of this.pinned()) {
      const e = this.entry(id);
      if (!e) continue;
      const keys = exactKeys(e);
      if (keys.has(q) || keys.has(qc) || keys.has(host)) add(id, 0, 0);
      else if ([...e.names, ...e.compacts].some((n) => n.startsWith(q) || n.startsWith(qc)))
        add(id, 0, 0);
    }
    if (terms.length === 1 && qc === q) {
      // one plain word: names, compact names and domains
      addAll(this.matchWord(q, ALL_FIELDS, true, PREFIX_ROWS));
    } else {
      // every word somewhere in the names or domains, in any order, each with its own typos ...
      // (a word with punctuation, like "next.js", only as a prefix: its typos are caught below)
      // a one-letter word ("google d", as an autocomplete box sends it) is searched without,
      // and each match must then have a word that starts with that letter
      const letters = terms.filter((t) => [...t].length < 2);
      const longer =
        letters.length && letters.length < terms.length
          ? terms.filter((t) => [...t].length >= 2)
          : terms;
      let all: Matches | null = null;
      for (const t of longer) {
        const m = this.matchWord(t, WORD_FIELDS, /^[\p{L}\p{N}]+$/u.test(t), PREFIX_ROWS_MULTI);
        if (!all) all = m;
        else {
          const both: Matches = new Map();
          for (const [id, a] of all) {
            const b = m.get(id);
            if (b) both.set(id, { edits: a.edits + b.edits, score: a.score + b.score });
          }
          all = both;
        }
        if (!all.size) break;
      }
      let n = 0;
      for (const [id, { edits, score }] of all ?? []) {
        // the first matches in row order (popular brands first): each is read to check it
        if (++n > MAX_RANKED * (longer === terms ? 4 : 1)) break;
        if (longer !== terms) {
          const e = this.entry(id);
          if (!e) continue;
          const t = termsOf(e);
          const indexed = [...t.text, ...t.domains];
          if (!letters.every((l) => indexed.some((w) => w.startsWith(l)))) continue;
        }
        add(id, score, edits);
      }
      // ... or the whole query without spaces and punctuation ("vs code" -> "vscode")
      if ([...qc].length >= 2)
        addAll(this.matchWord(qc, COMPACT_FIELD, terms.length === 1, PREFIX_ROWS));
    }

    // the candidates ranked: exact matches, then by fewest edits, each kind in the order the
    // rows came (prefix rows: popular brands and short words first), at most MAX_RANKED
    const candidates = [...hits].sort((a, b) => a[1].edits - b[1].edits).slice(0, MAX_RANKED);
    const ranked: Ranked[] = [];
    for (const [id, h] of candidates) {
      const entry = this.entry(id);
      if (!entry) continue;
      const r = { entry, ...h, ...classify(entry, q, qc, host) };
      // a crypto token is never a typo match ("unicef" is not the Unidef token)
      if (!(r.tier === 3 && r.entry.token)) ranked.push(r);
    }
    ranked.sort(compareRanked);
    const out: Brand[] = [];
    for (const r of ranked) {
      if (out.length >= limit) break;
      const b = this.catalog.brandById(r.entry.id);
      if (b) out.push(b);
    }
    return out;
  }

  /**
   * The brands one query word finds in `fields`: every indexed word it starts (no edits), and
   * with `typos`, every word of the names within its typo budget (typoDistance).
   */
  private matchWord(term: string, fields: Set<number>, typos: boolean, rows: number): Matches {
    const out: Matches = new Map();
    const keep = (row: TermRow, edits: number) => {
      if (!fields.has(row.field) || (edits && !TYPO_FIELDS.has(row.field))) return;
      // a word found in two fields counts in both (the names and the compact names)
      const score = weight(term, row.term, edits);
      const m = out.get(row.id);
      if (!m) out.set(row.id, { edits, score });
      else if (edits < m.edits) out.set(row.id, { edits, score });
      else if (edits === m.edits) m.score += score;
    };
    for (const row of this.db.termsWithPrefix(term, rows)) keep(row, 0);
    const budget = typos ? typoBudget(term) : 0;
    if (!budget) return out;
    const within = new Map<string, number>();
    for (const word of this.typoWords(term, budget)) {
      if (word.startsWith(term)) continue;
      const d = typoDistance(term, word, budget);
      if (d <= budget) within.set(word, d);
    }
    if (within.size)
      for (const row of this.db.termRows(within.keys())) keep(row, within.get(row.term) as number);
    return out;
  }

  /**
   * Words of the names that may be within `budget` edits of `term` (checked by the caller):
   * the symmetric-deletion lookups find every word one Levenshtein edit away and most two
   * edits away; swapped neighbours are looked up as they are; at two edits, when those found
   * none, words holding a third of the term (the trigram table) catch the rest (two edits leave
   * one third intact).
   */
  private typoWords(term: string, budget: number): Set<string> {
    const db = this.db;
    const dels = deletions(term);
    const keys = new Set([term, ...dels]);
    const words = new Set<string>();
    for (const swapped of swaps(term)) {
      words.add(swapped);
      if (budget < 2) continue;
      // a swap and one more edit: another swap, or a Levenshtein edit
      for (const again of swaps(swapped)) words.add(again);
      for (const k of deletions(swapped)) keys.add(k);
    }
    const chars = [...term];
    if (budget >= 2 && chars.length <= MAX_DELETION_WORD)
      for (const d of dels) for (const dd of deletions(d)) keys.add(dd);
    const found = new Set([...db.wordsByTypoKeys(keys), ...db.wordsByTypoKeys(words, true)]);
    // the substring lookups only when those found no word within the budget (they are the
    // costly part on a large vocabulary)
    const third = Math.floor(chars.length / 3);
    const near = [...found].some((w) => typoDistance(term, w, budget) <= budget);
    if (budget >= 2 && third >= 3 && !near)
      for (const at of [0, third, chars.length - third])
        for (const w of db.wordsContaining(chars.slice(at, at + third).join(""), SUBSTRING_ROWS))
          found.add(w);
    return found;
  }
}

/** Whether two entries of a brand rank the same for every query. */
function sameRanking(a: Entry, b: Entry): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
