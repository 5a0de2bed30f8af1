import { LRUCache } from "lru-cache";

/**
 * A bounded least-recently-used cache (lru-cache underneath): at most `maxEntries` values and
 * `maxSize` units of the sizes `sizeOf` gives (characters or bytes). A read makes the value the
 * most recent; a write past either bound drops the least recently used. Values may be null
 * (a lookup that found nothing is worth keeping too).
 */
export class Lru<K extends {}, V> {
  private cache: LRUCache<K, { v: V }>;
  private maxEntries: number;

  constructor(maxEntries: number, maxSize?: number, sizeOf?: (value: V) => number) {
    // lru-cache allocates its slots for `max` up front (hundreds of thousands here, for a cache
    // that may never fill): both bounds are kept by size instead, the entry count counted as a
    // size of 1 each or, beside a size bound, enforced on each write
    this.maxEntries = maxEntries;
    this.cache = new LRUCache<K, { v: V }>(
      maxSize === undefined
        ? { maxSize: maxEntries, sizeCalculation: () => 1 }
        : {
            maxSize,
            maxEntrySize: maxSize,
            sizeCalculation: (box) => Math.max(1, sizeOf ? sizeOf(box.v) : 1),
          },
    );
  }

  get size() {
    return this.cache.size;
  }

  /** the sum of the held values' sizes */
  get weight() {
    return this.cache.calculatedSize;
  }

  get(key: K): V | undefined {
    return this.cache.get(key)?.v;
  }

  set(key: K, value: V) {
    this.cache.set(key, { v: value });
    while (this.cache.size > this.maxEntries) this.cache.pop();
  }

  delete(key: K) {
    this.cache.delete(key);
  }

  clear() {
    this.cache.clear();
  }
}
