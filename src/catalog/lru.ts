/**
 * A bounded least-recently-used cache: at most `maxEntries` values and `maxSize` units of the
 * sizes `sizeOf` gives (characters or bytes). A read moves the value to the most recent end; a
 * write past either bound drops the least recently used values.
 */
export class Lru<K, V> {
  private map = new Map<K, { value: V; size: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize = Number.POSITIVE_INFINITY,
    private readonly sizeOf: (value: V) => number = () => 1,
  ) {}

  get size() {
    return this.map.size;
  }

  /** the sum of the held values' sizes */
  get weight() {
    return this.total;
  }

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: K, value: V) {
    const size = this.sizeOf(value);
    this.delete(key);
    if (size > this.maxSize) return;
    this.map.set(key, { value, size });
    this.total += size;
    while (this.map.size > this.maxEntries || this.total > this.maxSize) {
      this.delete(this.map.keys().next().value as K);
    }
  }

  delete(key: K) {
    const hit = this.map.get(key);
    if (!hit) return;
    this.map.delete(key);
    this.total -= hit.size;
  }

  clear() {
    this.map.clear();
    this.total = 0;
  }
}
