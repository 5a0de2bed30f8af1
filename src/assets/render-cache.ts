import { LRUCache } from "lru-cache";

/**
 * In-memory LRU of rendered images (lru-cache), bounded by the total bytes it holds, with coalescing:
 * concurrent requests for the same key share one render. A failed render is not cached.
 */
export interface RenderCacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  /** requests that joined a render already in flight */
  coalesced: number;
  evictions: number;
}

export class RenderCache {
  private entries: LRUCache<string, Uint8Array>;
  private inflight = new Map<string, Promise<Uint8Array>>();
  private counters = { hits: 0, misses: 0, coalesced: 0, evictions: 0 };

  constructor(readonly maxBytes: number) {
    this.entries = new LRUCache<string, Uint8Array>({
      maxSize: Math.max(1, maxBytes),
      // an image larger than the whole cache is not kept
      maxEntrySize: Math.max(1, maxBytes),
      sizeCalculation: (v) => Math.max(1, v.byteLength),
      dispose: (_v, _k, reason) => {
        if (reason === "evict") this.counters.evictions++;
      },
    });
  }

  /** The cached bytes for `key`, or those of `produce()` (run once per key at a time). */
  get(key: string, produce: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const hit = this.peek(key);
    if (hit) return Promise.resolve(hit);
    const pending = this.inflight.get(key);
    if (pending) {
      this.counters.coalesced++;
      return pending;
    }
    this.counters.misses++;
    const job = (async () => {
      try {
        const bytes = await produce();
        if (this.maxBytes > 0) this.entries.set(key, bytes);
        return bytes;
      } finally {
        this.inflight.delete(key);
      }
    })();
    this.inflight.set(key, job);
    return job;
  }

  /** The cached bytes for `key` (counted as a hit, made most recent), or undefined. */
  peek(key: string): Uint8Array | undefined {
    const hit = this.entries.get(key);
    if (hit) this.counters.hits++;
    return hit;
  }

  /** True when `key` is cached (does not touch its recency). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  clear() {
    this.entries.clear();
  }

  stats(): RenderCacheStats {
    return {
      entries: this.entries.size,
      bytes: this.entries.calculatedSize,
      maxBytes: this.maxBytes,
      ...this.counters,
    };
  }
}
