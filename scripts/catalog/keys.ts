/** Name normalization used to match one brand across data sets. */

/** simple-icons' own title -> slug rules (see its titleToSlug), used for matching only. */
export function siSlugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/\+/g, "plus")
    .replace(/\./g, "dot")
    .replace(/&/g, "and")
    .replace(/đ/g, "d")
    .replace(/ħ/g, "h")
    .replace(/ı/g, "i")
    .replace(/ĸ/g, "k")
    .replace(/ŀ/g, "l")
    .replace(/ł/g, "l")
    .replace(/ß/g, "ss")
    .replace(/ŧ/g, "t")
    .normalize("NFD")
    .replace(/[^a-z0-9]/g, "");
}

/** Lowercase letters and digits only ("Node.js" -> "nodejs", "active-campaign" -> "activecampaign"). */
export function compactKey(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z0-9]/g, "");
}

/**
 * A lookup from keys to brand ids in tiers: a key is tried tier by tier and the first tier
 * that names exactly one brand wins. A key that names two brands in one tier is ambiguous
 * there and never matches through that tier (no guessing between "c" and "c++").
 */
export class TieredIndex<T> {
  private tiers: Map<string, Set<T>>[] = [];

  add(tier: number, key: string, value: T): void {
    if (!key) return;
    while (this.tiers.length <= tier) this.tiers.push(new Map());
    const map = this.tiers[tier] as Map<string, Set<T>>;
    const set = map.get(key) ?? new Set<T>();
    set.add(value);
    map.set(key, set);
  }

  find(key: string): T | undefined {
    for (const map of this.tiers) {
      const hits = map.get(key);
      if (hits?.size === 1) return [...hits][0];
      if (hits && hits.size > 1) return undefined;
    }
    return undefined;
  }
}
