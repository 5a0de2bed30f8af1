/** Curated aliases (fixtures/alias-overrides.json) merged into the draft brands. */

import type { DraftBrand } from "./draft";
import { compactKey } from "./keys";

/** slug -> extra aliases; keys starting with "$" are comments. */
export type AliasOverrides = Record<string, string[] | string>;

/**
 * Adds each alias (once, never the brand's own name) and its compact key, so domains named
 * after it count as naming the brand (k8s.io for Kubernetes). Throws when a slug is unknown or
 * an alias names another brand: curated data must be unambiguous.
 */
export function applyAliasOverrides(drafts: DraftBrand[], overrides: AliasOverrides): number {
  const bySlug = new Map(drafts.map((d) => [d.slug, d]));
  // non-Latin names ("Яндекс") are keyed by their own lowercase letters, not compactKey's a-z
  const keyOf = (alias: string) =>
    compactKey(alias) ||
    alias
      .normalize("NFKC")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]/gu, "");
  const owner = new Map<string, string>();
  for (const d of drafts) {
    for (const k of [...d.primaryKeys, ...d.aliases.map(keyOf)]) {
      if (!owner.has(k)) owner.set(k, d.slug);
    }
  }
  let added = 0;
  for (const [slug, list] of Object.entries(overrides)) {
    if (slug.startsWith("$")) continue;
    const brand = bySlug.get(slug);
    if (!brand || !Array.isArray(list)) throw new Error(`alias override for unknown slug ${slug}`);
    for (const alias of list) {
      const key = keyOf(alias);
      const other = owner.get(key);
      if (!key || (other && other !== slug)) {
        throw new Error(`alias "${alias}" for ${slug} names ${other ?? "nothing"}`);
      }
      brand.keys.add(key);
      const known = [brand.name, ...brand.aliases].map((a) => a.toLowerCase());
      if (known.includes(alias.toLowerCase())) continue;
      brand.aliases.push(alias);
      added++;
    }
  }
  return added;
}
