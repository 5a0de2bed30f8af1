import type { SearchIndex } from "./service";

/** At most this many "did you mean" slugs in a 404 service_not_found body. */
export const MAX_SUGGESTIONS = 3;

/** A slug-to-suggestions function, given to the controllers that answer service_not_found. */
export type Suggest = (slug: string) => string[];

/**
 * Slugs from the search index that a near-miss slug probably meant ("coca-cola" → "cocacola"):
 * the slug searched as words (separators as spaces), best first. Empty for slugs too short or
 * too long to be worth a search.
 */
export function suggestSlugs(search: Pick<SearchIndex, "search">, slug: string): string[] {
  const q = slug.replace(/[-_.]+/g, " ").trim();
  if (q.length < 2 || q.length > 64) return [];
  return search
    .search(q, MAX_SUGGESTIONS)
    .map((b) => b.slug)
    .filter((s) => s !== slug);
}
