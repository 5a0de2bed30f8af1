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

/** `term` with two different neighbouring characters swapped, every way (by code point). */
export function swaps(term: string): string[] {
  const c = [...term];
  const out: string[] = [];
  for (let i = 0; i + 1 < c.length; i++) {
    if (c[i] === c[i + 1]) continue;
    const v = [...c];
    [v[i], v[i + 1]] = [c[i + 1] as string, c[i] as string];
    out.push(v.join(""));
  }
  return out;
}

/** True when b is a with exactly two different neighbouring characters swapped. */
export function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (i + 1 >= a.length || a[i] !== b[i + 1] || a[i + 1] !== b[i] || a[i] === a[i + 1])
    return false;
  return a.slice(i + 2) === b.slice(i + 2);
}

/** Levenshtein distance by code point; returns max + 1 as soon as it must exceed max. */
export function levenshtein(a: string, b: string, max: number): number {
  const s = [...a];
  const t = [...b];
  if (Math.abs(s.length - t.length) > max) return max + 1;
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      const v = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return Math.min(prev[t.length] as number, max + 1);
}

/**
 * Edits from a query term to an indexed term under the typo rule: the Levenshtein distance
 * (insert, delete or replace one character) when it is within the term's budget, or 1 when
 * the indexed term is the query term with two neighbouring characters swapped ("gihtub" ->
 * "github") and the budget is at least 1. Otherwise budget + 1 (no match).
 */
export function typoDistance(query: string, term: string, budget = typoBudget(query)): number {
  if (budget === 0) return query === term ? 0 : 1;
  if (isSwap(query, term)) return 1;
  return levenshtein(query, term, budget);
}
