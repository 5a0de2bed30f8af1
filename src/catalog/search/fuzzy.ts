/**
 * Words of a vocabulary within a Levenshtein distance of a term: the same answer as
 * MiniSearch's `SearchableMap.fuzzyGet` (code units; insert, delete, replace), found by a
 * filtered scan instead of a walk of the radix tree, which took 1.2-1.5 ms per term at distance
 * 2 over the directory's 54,000 words. Words are grouped by length and carry a 32-bit mask of
 * the characters they hold (code unit mod 32). A word whose length differs by more than `max`,
 * or whose mask has more than `max` bits the term's lacks (or the reverse), is skipped before
 * any distance is computed: each edit adds or removes at most one character.
 */
export class FuzzyLexicon {
  private groups: { words: string[]; masks: Uint32Array }[] = [];
  private row = new Int32Array(64);
  private prev = new Int32Array(64);

  constructor(words: Iterable<string>) {
    const lists: string[][] = [];
    for (const w of words) {
      let list = lists[w.length];
      if (!list) {
        list = [];
        lists[w.length] = list;
      }
      list.push(w);
    }
    for (let n = 0; n < lists.length; n++) {
      const list = lists[n] ?? [];
      this.groups[n] = { words: list, masks: Uint32Array.from(list, maskOf) };
    }
  }

  /** every word within `max` edits of `term`, with its distance */
  within(term: string, max: number): Map<string, number> {
    const out = new Map<string, number>();
    const mask = maskOf(term);
    const from = Math.max(0, term.length - max);
    const to = Math.min(this.groups.length - 1, term.length + max);
    for (let n = from; n <= to; n++) {
      const g = this.groups[n];
      if (!g) continue;
      const { words, masks } = g;
      for (let i = 0; i < words.length; i++) {
        const m = masks[i] as number;
        if (bits(mask & ~m) > max || bits(m & ~mask) > max) continue;
        const word = words[i] as string;
        const d = this.distance(term, word, max);
        if (d <= max) out.set(word, d);
      }
    }
    return out;
  }

  /** Levenshtein distance by code unit, or max + 1 once it must exceed max */
  private distance(a: string, b: string, max: number): number {
    const n = b.length;
    if (this.row.length <= n) {
      this.row = new Int32Array(n + 1);
      this.prev = new Int32Array(n + 1);
    }
    let prev = this.prev;
    let row = this.row;
    for (let j = 0; j <= n; j++) prev[j] = j;
    for (let i = 1; i <= a.length; i++) {
      const c = a.charCodeAt(i - 1);
      row[0] = i;
      let rowMin = i;
      for (let j = 1; j <= n; j++) {
        const v = Math.min(
          (prev[j] as number) + 1,
          (row[j - 1] as number) + 1,
          (prev[j - 1] as number) + (c === b.charCodeAt(j - 1) ? 0 : 1),
        );
        row[j] = v;
        if (v < rowMin) rowMin = v;
      }
      if (rowMin > max) return max + 1;
      const t = prev;
      prev = row;
      row = t;
    }
    return Math.min(prev[n] as number, max + 1);
  }
}

function maskOf(w: string): number {
  let m = 0;
  for (let i = 0; i < w.length; i++) m |= 1 << (w.charCodeAt(i) & 31);
  return m;
}

/** set bits of a 32-bit integer */
function bits(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
