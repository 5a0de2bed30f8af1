import { describe, expect, test } from "bun:test";
import MiniSearch from "minisearch";
import { FuzzyLexicon } from "../../../src/catalog/search/fuzzy";
import { builtCatalog } from "../../support/catalog";

/**
 * FuzzyLexicon answers MiniSearch's fuzzy lookups (search/service.ts useLexicon): it must find
 * exactly the words, and the distances, that MiniSearch's own radix-tree walk finds.
 */
const catalog = builtCatalog();
const words = new Set<string>();
for (const b of catalog.brands)
  for (const s of [b.name, ...b.aliases, b.slug, ...b.domains])
    for (const w of s.toLowerCase().split(/\s+/)) if (w) words.add(w);

/** MiniSearch's own fuzzy lookup over the same words (one document per word) */
const mini = new MiniSearch<{ id: number; w: string }>({ fields: ["w"], tokenize: (s) => [s] });
mini.addAll([...words].map((w, id) => ({ id, w })));
const own = (
  mini as unknown as { _index: { fuzzyGet(t: string, d: number): Map<string, [unknown, number]> } }
)._index;
const lexicon = new FuzzyLexicon(words);

const typos = (w: string, i: number) => [
  w.slice(0, i) + w.slice(i + 1), // deletion
  `${w.slice(0, i)}x${w.slice(i)}`, // insertion
  `${w.slice(0, i)}q${w.slice(i + 1)}`, // replacement
  w.slice(0, i) + (w[i + 1] ?? "") + (w[i] ?? "") + w.slice(i + 2), // swap
];

describe("FuzzyLexicon", () => {
  test(`same words and distances as MiniSearch's fuzzyGet (${words.size} catalog words)`, () => {
    const sample = [...words].filter((_, i) => i % 400 === 0);
    const terms = new Set<string>(["postgress", "javascirpt", "gihtub", "kubernetse", "ü", "a"]);
    for (const w of sample) for (const t of typos(w, Math.floor(w.length / 2))) terms.add(t);
    for (const t of typos("visualstudiocode", 3)) terms.add(t);
    let found = 0;
    for (const t of terms)
      for (const d of [1, 2]) {
        const want = new Map([...own.fuzzyGet(t, d)].map(([w, [, dist]]) => [w, dist]));
        const got = lexicon.within(t, d);
        expect([...got].sort()).toEqual([...want].sort());
        found += got.size;
      }
    expect(terms.size).toBeGreaterThan(500);
    expect(found).toBeGreaterThan(terms.size); // the typos find their words, and more
  }, 60_000);
});
