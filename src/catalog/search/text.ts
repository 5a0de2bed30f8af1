/**
 * Text normalisation and edit distance for search (pure functions, no dependencies).
 */

/** The echoed query: Unicode NFKC, lower-cased, inner whitespace collapsed, trimmed. */
export function normalizeQuery(q: string): string {
  return q.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim();
}

/** normalizeQuery plus diacritics folded ("Citroën" -> "citroen"): the form that is indexed. */
export function fold(s: string): string {
  return normalizeQuery(s)
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .normalize("NFC");
}

/**
 * fold() without whitespace, dashes, dots, apostrophes, slashes, commas and colons:
 * "Visual Studio Code" -> "visualstudiocode", "Next.js" -> "nextjs", "VS Code" -> "vscode".
 * Symbols that carry meaning in names (+ # & !) stay: "C++" is not "C".
 */
export function compact(s: string): string {
  return fold(s).replace(/[\s\p{Pd}\p{Pc}.'’·/\\,:;]+/gu, "");
}

/** Word parts of a folded name: split on anything that is not a letter, digit, + or #. */
export function wordParts(s: string): string[] {
  return s.split(/[^\p{L}\p{N}+#]+/u).filter(Boolean);
}

/**
 * The tails of a folded name that start at a word boundary after the first word:
 * "google drive" -> ["drive"], "visual studio code" -> ["studio code", "code"].
 */
export function wordTails(s: string): string[] {
  const tails: string[] = [];
  for (const m of s.matchAll(/[^\p{L}\p{N}]+(?=[\p{L}\p{N}])/gu)) {
    tails.push(s.slice((m.index ?? 0) + m[0].length));
  }
  return tails;
}

/**
 * Short forms of a multi-word folded name, matched only exactly: the initials of all words but
 * the last followed by the last word ("visual studio code" -> "vscode", "google drive" ->
 * "gdrive"), and for three words or more the initials ("amazon web services" -> "aws").
 */
export function abbreviations(s: string): string[] {
  const words = s.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  if (words.length < 2) return [];
  const initials = words.map((w) => [...w][0] as string);
  const out = [initials.slice(0, -1).join("") + words[words.length - 1]];
  if (words.length >= 3) out.push(initials.join(""));
  return out;
}

/** Typo budget of a query term: one edit from 4 characters, two from 8, none below 4. */
export function typoBudget(term: string): number {
  const n = [...term].length;
  return n >= 8 ? 2 : n >= 4 ? 1 : 0;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** `term` with two different neighbouring characters swapped, every way (by code point). */
export function swaps(term: string): string[] {
  const out: string[] = [];
  if (!SURROGATE.test(term)) {
    // fast path: one code unit per character
    for (let i = 0; i + 1 < term.length; i++) {
      if (term[i] !== term[i + 1])
        out.push(term.slice(0, i) + term[i + 1] + term[i] + term.slice(i + 2));
    }
    return out;
  }
  const c = [...term];
  for (let i = 0; i + 1 < c.length; i++) {
    if (c[i] === c[i + 1]) continue;
    const v = [...c];
    [v[i], v[i + 1]] = [c[i + 1] as string, c[i] as string];
    out.push(v.join(""));
  }
  return out;
}

/** `term` with one character deleted, every way (by code point). */
export function deletions(term: string): string[] {
  if (!SURROGATE.test(term)) {
    const out: string[] = [];
    for (let i = 0; i < term.length; i++) out.push(term.slice(0, i) + term.slice(i + 1));
    return out;
  }
  const c = [...term];
  return c.map((_, i) => [...c.slice(0, i), ...c.slice(i + 1)].join(""));
}

/**
 * Optimal string alignment distance by code point: the fewest inserted, deleted or replaced
 * characters and swaps of two neighbouring characters ("gihtub" is one edit from "github"),
 * no part edited twice. Returns max + 1 as soon as the distance must exceed max.
 */
export function editDistance(a: string, b: string, max: number): number {
  const s = [...a];
  const t = [...b];
  if (Math.abs(s.length - t.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        v = Math.min(v, (before[j - 2] as number) + 1);
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    before = prev;
    prev = cur;
  }
  return Math.min(prev[t.length] as number, max + 1);
}

/**
 * Edits from a query term to an indexed term under the typo rule (editDistance within the
 * term's budget, see typoBudget), or budget + 1 when it is outside.
 */
export function typoDistance(query: string, term: string, budget = typoBudget(query)): number {
  return budget === 0 ? (query === term ? 0 : 1) : editDistance(query, term, budget);
}

/**
 * How a brand's Latin spelling differs from the transliteration of its name in another script:
 * each rule turns a transliterated spelling into one the brand may use. Readable and tested
 * (tests/catalog/search/text.test.ts); every rule is applied everywhere in the query or not at
 * all, so a query of n words has at most 2^rules spellings, most rules not applying.
 */
export const SPELLING_RULES: readonly { rule: RegExp; as: string; example: string }[] = [
  { rule: /ks/g, as: "x", example: "Яндекс yandeks: Yandex; Нетфликс netfliks: Netflix" },
  { rule: /([a-z])\1/g, as: "$1", example: "Телеграмм telegramm: Telegram" },
  {
    rule: /(?<=[a-z])(?:i|ay)\b/g,
    as: "y",
    example: "ソニー soni: Sony; Спотифай spotifay: Spotify",
  },
  {
    rule: /k/g,
    as: "c",
    example: "Кока-Кола koka-kola: Coca-Cola; Мастеркард masterkard: Mastercard",
  },
  {
    rule: /s(?=[eiy])/g,
    as: "c",
    example: "Мерседес mersedes: Mercedes; Ситибанк sitibank: Citibank",
  },
  { rule: /z/g, as: "s", example: "Виза viza: Visa" },
  { rule: /u\b/g, as: "oo", example: "ヤフー yahu: Yahoo" },
  { rule: /eo/g, as: "u", example: "삼성 samseong: Samsung" },
  { rule: /ae/g, as: "ai", example: "현대 hyeondae: Hyundai" },
];

/**
 * The spellings a transliterated query stands for: itself (folded) and every combination of
 * the SPELLING_RULES that apply to it, the query as transliterated first.
 */
export function transliterationSpellings(latin: string): string[] {
  let out = [fold(latin)];
  for (const { rule, as } of SPELLING_RULES) {
    const next = out.map((s) => s.replace(rule, as)).filter((s) => !out.includes(s));
    out = [...out, ...new Set(next)];
  }
  return out;
}
