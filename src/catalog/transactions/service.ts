/**
 * Card-statement descriptors to brands (plain TS, no framework types). A descriptor is read by
 * the rules of descriptor.ts; the merchant's words are looked up in the catalog database's
 * `exact` table (names, aliases, compact names, domain labels: the search module's rows),
 * host names through the domain resolver, a name cut by the network's 22-25 characters through
 * a prefix scan of the compact names. Namesakes are told apart by the transaction's country and
 * merchant category code; the answer carries a confidence, and below CONFIDENCE_THRESHOLD it is
 * no answer (404): a wrong brand is worse than none. docs/transactions.md describes the rules.
 */

import { Lru } from "../../platform/cache";
import { type DomainError, invalid, notFound } from "../../platform/domain-errors";
import { type Tier, TRANSACTIONS_CAP } from "../../quota/limits";
import { type BrandResolver, toBrandView } from "../brand/service";
import type { Brand } from "../built-catalog";
import { FIELD } from "../search/entry";
import { compact, fold } from "../search/text";
import type { CatalogDb } from "../store/catalog-db";
import { type Group, mccGroups } from "./categories";
import {
  type Descriptor,
  expansions,
  explainLeftover,
  isLeading,
  type Leftover,
  namesNoMerchant,
  readDescriptor,
  type Word,
} from "./descriptor";
import { type Profile, profileOf, sameCompany } from "./profile";
import type { IntermediaryKind } from "./rules";

/** Below this confidence a lookup answers 404 merchant_not_found. */
export const CONFIDENCE_THRESHOLD = 0.7;

/** How the merchant was found. */
export type MatchKind = "name" | "alias" | "domain" | "label" | "truncated" | "intermediary";

export interface TransactionInput {
  descriptor: string;
  /** ISO 3166-1 alpha-2, any case */
  country?: string;
  /** 4-digit merchant category code */
  mcc?: string;
}

/** What a lookup learned of the descriptor (the `transaction` object of the answers). */
export interface TransactionInfo {
  /** the merchant's part of the descriptor, cleaned (no prefix, numbers, place); null when none */
  merchant: string | null;
  /** the processor, marketplace or wallet the descriptor names, if any */
  intermediary: { name: string; kind: IntermediaryKind; slug: string | null } | null;
  /** the country used: the one given, else the one the descriptor's place names */
  country: string | null;
  /** how the brand was found; null when none was */
  match: MatchKind | null;
  /** 0..1: the answer's confidence, or the best candidate's when it was below the threshold */
  confidence: number;
  /** the bank operation the descriptor is (cash_withdrawal, fee, interest, transfer, ...) */
  operation: string | null;
}

export interface TransactionResult {
  brand: Brand | null;
  transaction: TransactionInfo;
  /** the analytics miss to record (`transaction:<merchant>`), when it names a merchant not found */
  miss: string | null;
}

/** What the matcher reads from the catalog (CatalogService). */
export interface TransactionCatalog {
  readonly loaded: boolean;
  readonly database: CatalogDb;
  brandById(id: number): Brand | undefined;
  onChange(listener: (updated?: Brand) => void): void;
}

/** What the merchant words found: the best candidate, the country, the words that named it. */
interface Found {
  best: { id: number; kind: MatchKind; confidence: number } | null;
  country: string | null;
  /** the words [start, end) of the merchant's name */
  span: [number, number] | null;
}

interface Candidate {
  id: number;
  kind: MatchKind;
  score: number;
  countryAgrees: boolean | null;
  groupAgrees: boolean | null;
}

/** A run of merchant words looked up: where it is, its forms, and what follows it. */
interface Span {
  start: number;
  end: number;
  /** the folded and compact forms looked up */
  keys: Set<string>;
  leftover: Leftover;
}

/** Most words a name is read from. */
const MAX_NAME_WORDS = 6;
/** The merchant part's length from which a cut last word is looked up as a prefix. */
const TRUNCATED_FROM = 15;
/** Shortest compact prefix looked up for a cut name. */
const MIN_PREFIX = 8;

const WEIGHT: Record<MatchKind, number> = {
  name: 3,
  alias: 2,
  domain: 3,
  label: 1,
  truncated: 2,
  intermediary: 3,
};
const BASE: Record<MatchKind, number> = {
  name: 1,
  alias: 0.95,
  domain: 0.97,
  label: 0.85,
  truncated: 0.85,
  intermediary: 0.95,
};

/** A brand mapped in at most this many countries is a national chain. */
const NATIONAL = 3;

/** Groups a general retailer (department store, hypermarket, e-commerce) covers. */
const RETAIL: Group[] = [
  "grocery",
  "general",
  "clothing",
  "electronics",
  "home",
  "books",
  "sports",
  "pets",
  "alcohol",
  "pharmacy",
];

/** Whether a brand of `brand` groups is of one of `wanted` (a general retailer of any retail kind). */
function fits(brand: Set<Group>, wanted: Group[]): boolean {
  return wanted.some((g) => brand.has(g) || (brand.has("general") && RETAIL.includes(g)));
}

const round = (x: number) => Math.round(x * 100) / 100;
const uniq = <T>(xs: T[]) => [...new Set(xs)];

/** The folded and compact forms of a run of words, with each abbreviation also expanded. */
function phraseKeys(words: Word[]): string[] {
  let variants = [[] as string[]];
  for (const w of words) {
    const alts = expansions(w.text);
    const next: string[][] = [];
    for (const v of variants) for (const a of alts) if (next.length < 8) next.push([...v, a]);
    variants = next;
  }
  const out: string[] = [];
  for (const v of variants) {
    const phrase = v.join(" ");
    out.push(phrase, compact(phrase));
  }
  return uniq(out.filter(Boolean));
}

export class TransactionMatcher {
  private profiles = new Lru<number, Profile | null>(50_000);
  /**
   * what the merchant words found, by country, MCC, intermediary and words (numbers as "#": one
   * entry for every store and order number of a merchant); emptied on every catalog change
   */
  private found = new Lru<string, Found>(100_000);

  constructor(
    private catalog: TransactionCatalog,
    private resolver: BrandResolver,
  ) {
    catalog.onChange(() => {
      this.profiles.clear();
      this.found.clear();
    });
  }

  /** The brand a descriptor names, or null with what was learned. */
  match(input: TransactionInput): TransactionResult {
    const given = input.country?.toLowerCase();
    const mcc = input.mcc;
    const d = readDescriptor(input.descriptor);
    const intermediary = d.intermediary
      ? {
          name: d.intermediary.name,
          kind: d.intermediary.kind,
          slug: this.brandOfHost(d.intermediary.domain)?.slug ?? null,
        }
      : null;
    // a processor's short code before a star ("NF*NETFLIX.COM"): the merchant is after it,
    // unless the code is a name itself ("UPS*1Z999AA1...")
    let words = d.words;
    if (d.codeHead && !this.cachedFind(d, d.words, given, mcc).best) words = d.detail;
    const merchantWords = words.filter((w) => !w.number);
    const info: TransactionInfo = {
      merchant: merchantWords.length ? merchantWords.map((w) => w.raw).join(" ") : null,
      intermediary,
      country: given ?? null,
      match: null,
      confidence: 0,
      operation: d.operation,
    };
    if (d.operation || !this.catalog.loaded) return { brand: null, transaction: info, miss: null };
    const found = this.cachedFind(d, words, given, mcc);
    info.country = given ?? found.country;
    if (found.best) {
      info.confidence = round(found.best.confidence);
      if (found.best.confidence >= CONFIDENCE_THRESHOLD) {
        const brand = this.catalog.brandById(found.best.id) ?? null;
        if (brand) {
          info.match = found.best.kind;
          if (found.span)
            info.merchant = words
              .slice(found.span[0], found.span[1])
              .map((w) => w.raw)
              .join(" ");
          return { brand, transaction: info, miss: null };
        }
      }
    }
    // what the users' statements name that the catalog lacks: not a person paid through a
    // wallet (their names are not kept), not an empty or number-only merchant part
    const miss =
      info.merchant && d.intermediary?.kind !== "wallet"
        ? `transaction:${fold(info.merchant).slice(0, 100)}`
        : null;
    return { brand: null, transaction: info, miss };
  }

  /** The brand a host resolves to through the domain lookup. */
  private brandOfHost(host: string): Brand | null {
    return this.resolver.resolveHost(host);
  }

  /** find(), cached by what it depends on: the context, the intermediary and the words. */
  private cachedFind(
    d: Descriptor,
    words: Word[],
    given: string | undefined,
    mcc: string | undefined,
  ) {
    const key = `${given ?? ""}|${mcc ?? ""}|${d.intermediary?.name ?? ""}|${d.nameLength >= TRUNCATED_FROM ? "t" : ""}|${words.map((w) => (w.number ? "#" : w.host ? `@${w.host}` : w.text)).join(" ")}`;
    let f = this.found.get(key);
    if (!f) {
      f = this.find(d, words, given, mccGroups(mcc));
      this.found.set(key, f);
    }
    return f;
  }

  /** The best candidate for the merchant words, and the country the descriptor names. */
  private find(d: Descriptor, words: Word[], given: string | undefined, groups: Group[]): Found {
    const leftovers = new Map<number, Leftover>();
    const leftoverFrom = (i: number) => {
      let l = leftovers.get(i);
      if (!l) {
        l = explainLeftover(words.slice(i));
        leftovers.set(i, l);
      }
      return l;
    };
    const whole = leftoverFrom(0);
    let country = given ?? whole.country;
    const none = { best: null, country, span: null };

    // the intermediary alone: "AMZN MKTP US*2K8J90TQ2", "UBER *TRIP", "SHOPIFY* 123456789"
    const via = d.intermediary;
    if (via && namesNoMerchant(words)) {
      if (!via.alone) return none;
      const b = this.brandOfHost(via.domain);
      return b
        ? {
            best: { id: b.id, kind: "intermediary", confidence: BASE.intermediary },
            country,
            span: null,
          }
        : none;
    }

    const first = words.findIndex((w) => !isLeading(w.text));
    if (first < 0) return none;
    const starts = uniq([0, first]);

    // host names the descriptor writes, where the words around them are explained
    for (const s of starts) {
      const w = words[s];
      if (!w?.host) continue;
      const rest = leftoverFrom(s + 1);
      if (!rest.explained) continue;
      const b = this.brandOfHost(w.host);
      if (b) {
        country = given ?? rest.country ?? country;
        const c = this.judge([{ id: b.id, kind: "domain" }], country, groups, rest.kinds);
        if (c) return { best: c, country, span: [s, s + 1] };
      }
    }

    // spans of words from each start, longest first, each whose leftover is explained
    const spans: Span[] = [];
    for (const s of starts) {
      for (let e = Math.min(words.length, s + MAX_NAME_WORDS); e > s; e--) {
        const span = words.slice(s, e);
        if (!span.some((w) => !w.number && /\p{L}/u.test(w.text))) continue;
        // a host name ends a name ("JUST EAT.CO.UK"), never stands inside one
        if (span.slice(0, -1).some((w) => w.host)) continue;
        const leftover = leftoverFrom(e);
        if (!leftover.explained) continue;
        const keys = new Set(phraseKeys(span));
        // the intermediary's own name before it: "UBER *EATS" -> Uber Eats
        if (via)
          for (const own of via.own)
            for (const k of phraseKeys([{ text: own, raw: own, number: false }, ...span]))
              keys.add(k);
        spans.push({ start: s, end: e, keys, leftover });
      }
    }
    if (!spans.length) return none;
    spans.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
    const rows = this.catalog.database.exactRows(new Set(spans.flatMap((s) => [...s.keys])));
    const idsByKey = new Map<string, number[]>();
    for (const [k, id] of rows) idsByKey.set(k, [...(idsByKey.get(k) ?? []), id]);

    for (const span of spans) {
      const found: { id: number; kind: MatchKind; key: string; short: boolean }[] = [];
      for (const k of span.keys)
        for (const id of idsByKey.get(k) ?? []) {
          const kind = this.fieldOf(id, k);
          if (kind) found.push({ id, kind, key: k, short: [...compact(k)].length <= 2 });
        }
      if (!found.length) continue;
      const spanCountry = given ?? span.leftover.country ?? country;
      const best = this.judge(found, spanCountry, groups, span.leftover.kinds);
      return { best, country: spanCountry, span: [span.start, span.end] };
    }

    // a name cut by the network: the whole name part as the start of a compact name
    const cut = this.truncated(d, words, starts, leftoverFrom, given ?? country, groups);
    return cut ? { ...cut, country } : none;
  }

  /** A name cut at the network's length ("DICK'S SPORTING GOO"): a unique compact-name prefix. */
  private truncated(
    d: Descriptor,
    words: Word[],
    starts: number[],
    leftoverFrom: (i: number) => Leftover,
    country: string | null | undefined,
    groups: Group[],
  ) {
    if (d.nameLength < TRUNCATED_FROM) return null;
    const s = starts[starts.length - 1] as number;
    let e = words.findIndex((w, i) => i >= s && w.number);
    if (e < 0) e = words.length;
    if (e - s < 1 || !leftoverFrom(e).explained) return null;
    const prefix = compact(
      words
        .slice(s, e)
        .map((w) => w.text)
        .join(" "),
    );
    if ([...prefix].length < MIN_PREFIX) return null;
    const ids = uniq(
      this.catalog.database
        .termsWithPrefix(prefix, 20)
        .filter((r) => r.field === FIELD.compact && r.term.startsWith(prefix) && r.term !== prefix)
        .map((r) => r.id),
    );
    if (!ids.length) return null;
    const best = this.judge(
      ids.map((id) => ({ id, kind: "truncated" as const })),
      country ?? null,
      groups,
      leftoverFrom(e).kinds,
    );
    return best ? { best, span: [s, e] as [number, number] } : null;
  }

  /** How a key names a brand: its own name, an alias, or its domain's label (null: only initials or a ticker). */
  private fieldOf(id: number, key: string): MatchKind | null {
    const p = this.profile(id);
    if (!p) return null;
    if (key === p.name || key === compact(p.name)) return "name";
    if (p.names.has(key) || p.compacts.has(key)) return "alias";
    if (p.labels.has(key)) return "label";
    return null;
  }

  /**
   * The best of the candidates with its confidence: each scored by how it matched, whether its
   * kind fits the MCC and the kind words after its name, whether it trades in the transaction's
   * country, and how well known it is; a runner-up close behind lowers the confidence
   * (namesakes the context cannot tell apart).
   */
  private judge(
    found: { id: number; kind: MatchKind; key?: string; short?: boolean }[],
    country: string | null | undefined,
    groups: Group[],
    needs: Group[][],
  ): { id: number; kind: MatchKind; confidence: number } | null {
    const byId = new Map<number, Candidate & { unsure: boolean }>();
    for (const f of found) {
      const p = this.profile(f.id);
      if (!p) continue;
      const groupAgrees = groups.length && p.groups.size ? fits(p.groups, groups) : null;
      // a domain's label of three letters or fewer ("wm", "bjs") is an abbreviation many
      // companies share: only with an MCC of the brand's kind
      if (f.kind === "label" && [...(this.labelOf(f.id) ?? "")].length <= 3 && groupAgrees !== true)
        continue;
      // "SHELL OIL": the brand must be of the kind the words name; of an unknown kind, the
      // MCC must be of it ("DELTA AIR" with an airline MCC), else the match is unsure
      if (p.groups.size && needs.some((need) => !fits(p.groups, need))) continue;
      const unsure =
        (!p.groups.size && needs.some((need) => !need.some((g) => groups.includes(g)))) ||
        // a name of two letters ("QT", "EE") of a kind the MCC does not confirm
        (groups.length > 0 && groupAgrees !== true && f.short === true);
      // a brand whose sites are national ones trades under a site's label where that site is
      // (O2's telefonica.de: Germany, not Spain, although O2 has a Spanish site)
      const where =
        (p.countries && f.kind === "label" && f.key
          ? p.labelCountries.get(compact(f.key))
          : null) ?? p.countries;
      // a national chain (mapped in at most three countries) elsewhere is another company
      const national = where !== null && where.size <= NATIONAL;
      // where it trades (OSM, its domains) before what its description calls it
      const countryAgrees = !country
        ? null
        : where?.has(country)
          ? true
          : national
            ? false
            : !where && p.home.has(country)
              ? true
              : null;
      const score =
        WEIGHT[f.kind] +
        (groupAgrees === true ? 2 : groupAgrees === false ? -2 : 0) +
        (countryAgrees === true ? 2 : countryAgrees === false ? -2 : 0) +
        0.4 * Math.min(p.popularity, 6);
      const before = byId.get(f.id);
      if (!before || before.score < score)
        byId.set(f.id, { id: f.id, kind: f.kind, score, countryAgrees, groupAgrees, unsure });
    }
    const ranked = [...byId.values()].sort((a, b) => b.score - a.score || a.id - b.id);
    const best = ranked[0];
    if (!best) return null;
    const margin = ranked[1] ? best.score - ranked[1].score : Number.POSITIVE_INFINITY;
    let confidence = BASE[best.kind];
    if (best.groupAgrees === false) confidence *= 0.8;
    if (best.countryAgrees === false) confidence *= 0.65;
    if (best.unsure) confidence *= 0.65;
    // a close runner-up: namesakes the context cannot tell apart, unless the two are the same
    // company entered twice (same name, nothing known of them disagrees)
    const second = ranked[1] ? this.profile(ranked[1].id) : null;
    const twin = second !== null && sameCompany(this.profile(best.id), second);
    if (margin < 1 && !twin) confidence *= 0.5;
    else if (margin < 2 && !twin) confidence *= 0.9;
    return { id: best.id, kind: best.kind, confidence };
  }

  /** The shortest domain label of a brand (for the abbreviation rule). */
  private labelOf(id: number): string | null {
    const p = this.profile(id);
    if (!p?.labels.size) return null;
    return [...p.labels].sort((a, b) => a.length - b.length)[0] ?? null;
  }

  private profile(id: number): Profile | null {
    let p = this.profiles.get(id);
    if (p === undefined) {
      const entry = this.catalog.database.entry(id);
      const brand = this.catalog.brandById(id);
      p = entry && brand ? profileOf(entry, brand) : null;
      this.profiles.set(id, p);
    }
    return p;
  }
}

/** 404 merchant_not_found for a lookup that found no brand, with what was read from the descriptor. */
export function merchantNotFound(r: TransactionResult): DomainError {
  const t = r.transaction;
  const message = t.operation
    ? `The descriptor is a bank operation (${t.operation}), not a payment to a merchant.`
    : t.confidence > 0
      ? `No brand matches the descriptor with enough confidence (${t.confidence} < ${CONFIDENCE_THRESHOLD}).`
      : t.merchant
        ? `No brand matches the merchant ${JSON.stringify(t.merchant)}.`
        : "The descriptor names no merchant.";
  return notFound("merchant_not_found", message, { transaction: t });
}

/**
 * POST /v1/transactions (and the MCP tool): each descriptor answered as the single lookup
 * answers it, in order, with the misses to record once each; over the tier's cap, 422
 * batch_too_large. `found` is told each brand found (background enrichment).
 */
export function resolveBatch(
  matcher: TransactionMatcher,
  items: TransactionInput[],
  tier: Tier,
  found: (brand: Brand) => void,
) {
  const cap = TRANSACTIONS_CAP[tier];
  if (items.length > cap)
    throw invalid(
      `At most ${cap} descriptors per call on the ${tier} tier (got ${items.length}).`,
      "batch_too_large",
    );
  const misses = new Set<string>();
  const results = items.map((item) => {
    const r = matcher.match(item);
    if (r.miss) misses.add(r.miss);
    if (r.brand) found(r.brand);
    return {
      descriptor: item.descriptor,
      brand: r.brand ? toBrandView(r.brand) : null,
      transaction: r.transaction,
    };
  });
  return { results, misses: [...misses] };
}
