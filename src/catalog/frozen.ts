/**
 * One value derived from a list of frozen brands, shared by every caller that derives it from
 * the same list. Frozen brands cannot change, so the same list always gives the same value:
 * several apps over one catalog parsed once (as the test suites make them) build the search
 * index and the domain maps once instead of once per app. A catalog parsed as usual is not
 * frozen and gets a value of its own each time.
 */
import type { Brand } from "./types";

export interface FrozenCache<T> {
  /** `make(brands)`, or the value made earlier from the same frozen brands in the same order */
  get(
    brands: readonly Brand[],
    make: (brands: readonly Brand[]) => T,
  ): { value: T; shared: boolean };
}

export function frozenCache<T>(): FrozenCache<T> {
  // by the list's first brand: the value goes when the catalog does
  const held = new WeakMap<Brand, { brands: readonly Brand[]; value: T }>();
  return {
    get(brands, make) {
      const first = brands[0];
      const hit = first && held.get(first);
      if (hit && hit.brands.length === brands.length && hit.brands.every((b, i) => b === brands[i]))
        return { value: hit.value, shared: true };
      const value = make(brands);
      // one value per catalog: the first list kept (a sub-list of the same brands, as a test
      // that reloads a shortened catalog makes, gets its own)
      if (hit || !first || !brands.every((b) => Object.isFrozen(b)))
        return { value, shared: false };
      held.set(first, { brands: [...brands], value });
      return { value, shared: true };
    },
  };
}
