/**
 * In-memory LRU of rendered images, bounded by the total bytes it holds, with coalescing:
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
  /** Map keeps insertion order: the first entry is the least recently used. */
  private entries = new Map<string, Uint8Array>();
  private inflight = new Map<string, Promise<Uint8Array>>();
  private bytes = 0;
  private counters = { hits: 0, misses: 0, coalesced: 0, evictions: 0 };

  constructor(readonly maxBytes: number) {}

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
        this.put(key, bytes);
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
    if (!hit) return undefined;
    this.counters.hits++;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** True when `key` is cached (does not touch its recency). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  private put(key: string, value: Uint8Array) {
    if (value.byteLength > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.byteLength;
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    this.bytes += value.byteLength;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.byteLength;
      this.counters.evictions++;
    }
  }

  clear() {
    this.entries.clear();
    this.bytes = 0;
  }

  stats(): RenderCacheStats {
    return {
      entries: this.entries.size,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      ...this.counters,
    };
  }
}
