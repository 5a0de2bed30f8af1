/**
 * Reading a card-statement descriptor (pure functions): the intermediary's prefix, a bank
 * operation, the merchant's words and what follows them. The matcher (service.ts) looks the
 * words up in the catalog; explainLeftover says whether the words after a matched name are all
 * noise (numbers, places, store words, legal forms), the rule that keeps a local business from
 * answering as the chain it shares a word with.
 */
import { parse } from "tldts";
import { fold } from "../search/text";
import { type Group, KIND_WORDS } from "./categories";
import { cityCountries, countryCode, MAX_PLACE_WORDS, stateCountry } from "./places";
import {
  ABBREVIATIONS,
  GENERIC,
  INTERMEDIARIES,
  type Intermediary,
  LEADING,
  LEGAL,
  OPERATIONS,
  REGIONS,
  STREET_END,
  STREETS,
} from "./rules";

export interface Word {
  /** folded: lower case, diacritics removed ("mcdonald's", "7-eleven"); a host's label */
  text: string;
  /** as the descriptor writes it */
  raw: string;
  /** a number, store or terminal number, phone number or reference code */
  number: boolean;
  /** a host name the descriptor writes ("netflix.com", "help.uber.com") */
  host?: string;
}

export interface Descriptor {
  /** the descriptor with whitespace collapsed */
  text: string;
  /** the bank operation it is (cash_withdrawal, fee, transfer, ...), or null */
  operation: string | null;
  intermediary: Intermediary | null;
  /** the merchant's part: the words before the first `*` or ` - ` (after an intermediary's prefix) */
  words: Word[];
  /** the words after that separator: a product, a reference, a place */
  detail: Word[];
  /** the part before the `*` is a processor's short code ("NF*NETFLIX.COM"): the merchant follows it */
  codeHead: boolean;
  /** characters of the merchant's part as written (networks cut names at 22 to 25) */
  nameLength: number;
}

/**
 * The descriptor's text folded for the rules: NFKC, lower case, no diacritics, single spaces
 * (plain ASCII, most descriptors, only lower-cased: the same result, faster).
 */
const foldText = (s: string) => (/^[\x20-\x7e]*$/.test(s) ? s.toLowerCase() : fold(s));

/** A host the descriptor writes, when the text is one (a registrable domain under an ICANN suffix). */
function hostOf(chunk: string): string | null {
  if (!/^(?:https?:\/\/)?(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:\/\S*)?$/.test(chunk))
    return null;
  const p = parse(chunk.replace(/^https?:\/\//, ""), { allowPrivateDomains: true });
  if (!p.isIcann || !p.domain || !p.hostname || !p.domainWithoutSuffix) return null;
  if (LEGAL.has(p.domainWithoutSuffix)) return null;
  return p.hostname.replace(/^www\./, "");
}

/**
 * "YouTubePremium" -> You, Tube, Premium; "McDonald's" -> Mc, Donald's: a capital starting a
 * lower-case word starts a new one ("GmbH" and a word written in caps stay whole).
 */
function camelParts(raw: string): string[] {
  if (!/\p{Ll}\p{Lu}\p{Ll}/u.test(raw)) return [raw];
  return raw.split(/(?<=\p{Ll})(?=\p{Lu}\p{Ll})/u);
}

function isNumberish(t: string): boolean {
  const digits = t.replace(/\D/g, "").length;
  if (!digits) return false;
  const letters = t.replace(/[^\p{L}]/gu, "").length;
  if (!letters) return true;
  // "1-800-flowers", "7-eleven": a name with digits in it
  if (digits < 2 || /(?:^|-)\p{L}{3,}(?:-|$)/u.test(t)) return false;
  // store and terminal numbers (F12345, T0217, Q35) and reference codes, whose letters and
  // digits alternate (2K8J90TQ2); not a name with a number after it (MARIAGARCIA77)
  const runs = t.match(/\p{L}+|\d+/gu)?.length ?? 0;
  return digits >= letters || /^\p{L}{1,2}#?\d/u.test(t) || runs >= 4;
}

/** The words of one part of a descriptor, in order. */
export function wordsOf(part: string): Word[] {
  const out: Word[] = [];
  for (const chunk of part.split(/[\s_|,;()"]+/)) {
    if (!chunk) continue;
    const host = hostOf(chunk.toLowerCase());
    if (host) {
      const label = parse(host, { allowPrivateDomains: true }).domainWithoutSuffix ?? host;
      out.push({ text: label, raw: chunk, number: false, host });
      continue;
    }
    // "S/MKTS" is one abbreviation; "CVS/PHARMACY" and "WOOLWORTHS/123" are two words
    const pieces = /^\p{L}\/\p{L}+$/u.test(chunk) ? [chunk] : chunk.split("/");
    for (const piece of pieces) {
      // "H&M0123", "BP#9876543", "COOP-1234": a name glued to a store number
      const glued = /^(\p{L}[\p{L}&'.-]*\p{L})[-#]?(\d{3,})$/u.exec(piece);
      const parts = glued ? [glued[1] as string, glued[2] as string] : [piece];
      for (const p of parts)
        for (const raw of camelParts(p)) {
          const text = foldText(raw).replace(/^[^\p{L}\p{N}&#+]+|[^\p{L}\p{N}&+']+$/gu, "");
          if (!text) continue;
          out.push({ text: text.replace(/^#/, ""), raw, number: isNumberish(text) });
        }
    }
  }
  return out;
}

/** The intermediary whose prefix starts the folded text, and the text after it. */
function intermediaryOf(folded: string): { via: Intermediary; rest: string } | null {
  for (const via of INTERMEDIARIES) {
    const m = via.prefix.exec(folded);
    if (m) return { via, rest: folded.slice(m[0].length) };
  }
  return null;
}

/** Its own name again at the start of the merchant part ("DD *DOORDASH ...", "UBER *UBER *TRIP"). */
function dropOwn(via: Intermediary, rest: string): string {
  for (let again = 0; again < 2; again++) {
    const own = via.own.find((n) => new RegExp(`^${n}(?:\\s*\\*+\\s*|\\s+|$)`).test(rest));
    if (!own) break;
    rest = rest.slice(own.length).replace(/^\s*\*+\s*|^\s+/, "");
  }
  return rest;
}

/** Read a descriptor: operation, intermediary, the merchant's words and the detail after them. */
export function readDescriptor(input: string): Descriptor {
  const text = input.normalize("NFKC").replace(/\s+/g, " ").trim();
  const folded = foldText(text);
  let rest = folded;
  const found = intermediaryOf(rest);
  const intermediary = found?.via ?? null;
  if (found) rest = dropOwn(found.via, found.rest);
  const operation = OPERATIONS.find((o) => o.pattern.test(rest))?.kind ?? null;
  // the written case is kept where folding kept the length (ASCII, most descriptors): raw words
  // for display, and camel-case words ("GOOGLE *YouTubePremium")
  const source = folded.length === text.length ? text.slice(text.length - rest.length) : rest;
  const star = source.indexOf("*");
  const dash = source.search(/\s-+\s|--/);
  const cut = [star, dash].filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? -1;
  let head = cut >= 0 ? source.slice(0, cut) : source;
  let detail = cut >= 0 ? source.slice(cut).replace(/^(?:\s*\*+\s*|\s*-+\s*)/, "") : "";
  // "*NETFLIX" with nothing before the star: the merchant is after it
  if (!head.trim() && detail) [head, detail] = [detail, ""];
  const words = wordsOf(head);
  const codeHead =
    cut === star &&
    star >= 0 &&
    words.length === 1 &&
    /^\p{L}{1,3}\d?$/u.test(words[0]?.text ?? "") &&
    detail.length > 0;
  return {
    text,
    operation,
    intermediary,
    words,
    detail: wordsOf(detail),
    codeHead,
    nameLength: head.trim().length,
  };
}

/** The words a name word may stand for ("whsl" -> wholesale), the word itself first. */
export function expansions(word: string): string[] {
  return [word, ...(ABBREVIATIONS[word] ?? [])];
}

/** A word that is never part of a merchant's name where it follows one. */
export function isGeneric(word: string): boolean {
  return expansions(word).some((w) => GENERIC.has(w));
}

/** The kinds of business a word names ("oil": fuel), or null. */
export function kindsOf(word: string): Group[] | null {
  for (const w of expansions(word)) {
    const k = KIND_WORDS.get(w);
    if (k) return k;
  }
  return null;
}

/** What the words after a matched name are: all noise, and the country a place among them names. */
export interface Leftover {
  explained: boolean;
  /** the country a state, province, country or city among them names (one country only) */
  country: string | null;
  /** kinds of business the words name: the brand must be of one of each ("SHELL OIL": fuel) */
  kinds: Group[][];
}

/** A street word, or a word ending like a street name ("hauptstrasse"). */
const isStreet = (w: string) => STREETS.has(w) || (w.length > 6 && STREET_END.test(w));

/** UK and Canadian postcode halves ("SW1A", "1AA", "M5V", "2T6"). */
const POSTCODE = /^(?:[a-z]{1,2}\d[a-z\d]?|\d[a-z]{2}|[a-z]\d[a-z]|\d[a-z]\d)$/;

/**
 * Whether the words after a name are all explained: numbers and codes, and everything after one
 * (a store number is followed by its place; a legal form by the branch); a country's code or
 * name at the end, and before it a state or province code with up to three words of a town
 * before that (the "CITY ST" ending of US and Canadian descriptors, towns of any size); a street
 * word with up to two words of its name before it; cities of at least 50,000 inhabitants
 * (GeoNames) and countries anywhere; store, payment and receipt words; legal forms; and words
 * naming a kind of business, which the brand must then be (`kinds`). Any other word is
 * unexplained: the name matched is only part of another business's name.
 */
export function explainLeftover(words: Word[]): Leftover {
  let country: string | null = null;
  const kinds: Group[][] = [];
  const note = (c: string | null | undefined) => {
    if (c && country === null) country = c;
  };
  const no = { explained: false, country: null, kinds: [] };
  // "GMBH-ZW": a legal form with the branch's mark
  let marker = words.findIndex(
    (w) => w.number || LEGAL.has(w.text) || LEGAL.has(w.text.split("-")[0] as string),
  );
  if (marker < 0) marker = words.length;
  const before = words.slice(0, marker).map((w) => w.text);
  for (const w of words.slice(marker)) note(stateCountry(w.text) ?? countryCode(w.text));
  if (before.length && words.slice(0, marker).some((w) => w.host)) return no;
  let end = before.length;
  // "... LONDON GB", "... SYDNEY NS AUS", "... BENTONVILLE AR"
  const last = before[end - 1];
  if (last !== undefined && countryCode(last)) {
    note(countryCode(last));
    end--;
  }
  const state = before[end - 1];
  if (state !== undefined && stateCountry(state)) {
    note(stateCountry(state));
    end--;
    let town = 0;
    const plain = (w: string) => !isGeneric(w) && !kindsOf(w);
    while (end > 0 && town < 3 && plain(before[end - 1] as string)) {
      end--;
      town++;
    }
  }
  const explained = new Array<boolean>(end).fill(false);
  // "MARY ST", "MAIN STREET": a street and up to two words of its name (which must be there)
  for (let i = 1; i < end; i++)
    if (isStreet(before[i] as string))
      for (let k = Math.max(0, i - 2); k <= i; k++) explained[k] = true;
  let j = 0;
  while (j < end) {
    const w = before[j] as string;
    if (explained[j] || isGeneric(w) || REGIONS.has(w) || LEGAL.has(w)) {
      j++;
      continue;
    }
    const kind = kindsOf(w);
    if (kind) {
      kinds.push(kind);
      j++;
      continue;
    }
    if (w.includes("-") && w.split("-").every((p) => REGIONS.has(p) || countryCode(p) !== null)) {
      j++;
      continue;
    }
    // the longest place name starting here
    let placed = 0;
    for (let n = Math.min(MAX_PLACE_WORDS, end - j); n >= 1 && !placed; n--) {
      const c = placeCountry(before.slice(j, j + n).join(" "));
      if (c !== undefined) {
        note(c);
        placed = n;
      }
    }
    if (!placed) return no;
    j += placed;
  }
  return { explained: true, country, kinds };
}

/**
 * The country a place name names: a country's code or name, or a city in one country; null for a
 * city several countries have; undefined when it is no place.
 */
function placeCountry(name: string): string | null | undefined {
  const code = countryCode(name);
  if (code) return code;
  const cities = cityCountries(name);
  if (!cities) return POSTCODE.test(name) ? null : undefined;
  return cities.length === 1 ? (cities[0] as string) : null;
}

/**
 * Whether the words after an intermediary's prefix name no merchant: only numbers, codes, store
 * and payment words, regions and country or state codes ("AMZN MKTP US*2K8J90TQ2", "UBER *TRIP").
 * A city or a kind of business is a merchant's ("SQ *SUNRISE BAKERY").
 */
export function namesNoMerchant(words: Word[]): boolean {
  return words.every(
    (w) =>
      w.number ||
      isGeneric(w.text) ||
      REGIONS.has(w.text) ||
      LEGAL.has(w.text) ||
      stateCountry(w.text) !== null ||
      (w.text.length <= 3 && countryCode(w.text) !== null) ||
      w.text.split("-").every((p) => REGIONS.has(p) || countryCode(p) !== null),
  );
}

/** A word banks and terminals put before the merchant's name. */
export const isLeading = (word: string) => LEADING.has(word) || isGeneric(word);
