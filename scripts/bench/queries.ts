/**
 * A realistic search query stream for benchmarks, derived from the catalog (deterministic):
 *  - 500 distinct queries over the brands, most popular brands first (popularity as search
 *    ranks it), cycling through kinds: exact name, prefix of the name as typed so far, a typo
 *    (two neighbouring letters swapped, a letter dropped or doubled), a slug, a multi-word name
 *    or two words of one, a domain;
 *  - a stream drawn from them with Zipf-like repetition (weight of the query of rank r is
 *    1 / r^exponent, exponent 1.0), as an autocomplete box sees: few queries are most of it.
 */

import type { Brand } from "../../src/catalog/built-catalog";
import { popularityOf } from "../../src/catalog/search/service";
import { normalizeQuery } from "../../src/catalog/search/text";

/** mulberry32: a small seeded PRNG, so every run draws the same stream */
export function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function typo(name: string, n: number): string | null {
  const s = name.toLowerCase();
  if (s.length < 5) return null;
  const i = 1 + (n % (s.length - 2));
  switch (n % 3) {
    case 0: // swap two neighbours
      return s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
    case 1: // drop one
      return s.slice(0, i) + s.slice(i + 1);
    default: // double one
      return s.slice(0, i) + s[i] + s.slice(i);
  }
}

export type QueryKind = "exact" | "prefix" | "typo" | "slug" | "multi" | "domain";
const KINDS: QueryKind[] = ["exact", "prefix", "typo", "slug", "multi", "domain"];

/** `count` distinct normalized queries (default 500), most popular first, with their kind. */
export function realisticQueries(brands: readonly Brand[], count = 500) {
  const ranked = [...brands].sort(
    (a, b) => popularityOf(b) - popularityOf(a) || a.name.length - b.name.length || a.id - b.id,
  );
  const multiWord = ranked.filter((b) => b.name.includes(" "));
  const out: { q: string; kind: QueryKind }[] = [];
  const seen = new Set<string>();
  const add = (raw: string | null | undefined, kind: QueryKind) => {
    const q = raw ? normalizeQuery(raw) : "";
    if ([...q].length < 2 || q.length > 100 || seen.has(q)) return;
    seen.add(q);
    out.push({ q, kind });
  };
  for (let n = 0; out.length < count && n < ranked.length * KINDS.length; n++) {
    const b = ranked[Math.floor(n / 2) % ranked.length] as Brand;
    const kind = KINDS[n % KINDS.length] as QueryKind;
    if (kind === "exact") add(b.name, kind);
    else if (kind === "prefix") add(b.name.slice(0, 2 + (n % 4)), kind);
    else if (kind === "typo") add(typo(b.name, n), kind);
    else if (kind === "slug") add(b.slug, kind);
    else if (kind === "domain") add(b.domains[0], kind);
    else {
      const m = multiWord[Math.floor(n / 6) % multiWord.length] as Brand;
      const words = m.name.split(" ");
      // the whole name, or its words in the other order, as people type either
      add(n % 12 < 6 ? m.name : [...words].reverse().join(" "), kind);
    }
  }
  return out;
}

/** `length` draws from `items` with weight 1 / rank^exponent (rank 1 = items[0]). */
export function zipfStream<T>(items: readonly T[], length: number, exponent = 1, seed = 23): T[] {
  const cdf: number[] = [];
  let sum = 0;
  for (let r = 1; r <= items.length; r++) {
    sum += 1 / r ** exponent;
    cdf.push(sum);
  }
  const random = prng(seed);
  const out: T[] = [];
  for (let i = 0; i < length; i++) {
    const x = random() * sum;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    out.push(items[lo] as T);
  }
  return out;
}
