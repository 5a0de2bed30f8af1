/**
 * GET /v1/search bodies as JSON text, cached whole by normalized query and limit.
 *
 * A body is assembled from the catalog's pre-serialized entries (CatalogService.entryJson), in
 * the key order the SearchResponse schema gives (matches, query, total), so a cached body is
 * the body the uncached path builds. The cache is a bounded LRU (entries and bytes). It is
 * emptied when the search index is rebuilt or re-ranked (catalog reload, a brand whose searched
 * fields or popularity changed) and loses only the bodies holding a brand whose entry changed
 * otherwise (enrichment adding colors).
 */
import { LRUCache } from "lru-cache";
import type { Brand } from "../built-catalog";
import { normalizeQuery } from "./text";

export interface SearchSource {
  search(query: string, limit: number): Brand[];
  /** build the index now if it is not current (it is built lazily, on first use) */
  ready(): void;
  /** changes whenever results for some query may have changed */
  readonly generation: number;
}

export interface EntrySource {
  entryJson(brand: Brand): string;
  onChange(listener: (updated?: Brand) => void): void;
}

export interface SearchCacheLimits {
  /** most bodies kept (default 5,000) */
  maxEntries?: number;
  /** most characters of bodies kept (default 16 Mi, about 16 MiB of mostly ASCII) */
  maxChars?: number;
}

interface Cached {
  json: string;
  ids: number[];
}

export class SearchResponses {
  private cache: LRUCache<string, Cached>;
  /** cache keys by brand id, to drop the bodies holding a changed entry */
  private byBrand = new Map<number, Set<string>>();
  private generation: number;

  constructor(
    private index: SearchSource,
    private entries: EntrySource,
    limits: SearchCacheLimits = {},
  ) {
    const maxChars = limits.maxChars ?? 16 * 1024 * 1024;
    this.cache = new LRUCache<string, Cached>({
      max: limits.maxEntries ?? 5000,
      maxSize: maxChars,
      maxEntrySize: maxChars,
      sizeCalculation: (v) => Math.max(1, v.json.length),
      // whatever removes a body (eviction, a changed brand, clear) drops it from byBrand too
      dispose: (v, key) => this.unindex(key, v),
    });
    this.generation = index.generation;
    // registered after the index's own listener (the index is built first): by the time this
    // runs, the index has re-indexed or re-ranked, and bumped its generation if it did
    entries.onChange((updated) => {
      if (!updated || this.index.generation !== this.generation) this.clear();
      else this.evictBrand(updated.id);
    });
  }

  /** Number of cached bodies and their total length in characters. */
  get stats() {
    return { entries: this.cache.size, chars: this.cache.calculatedSize };
  }

  clear() {
    this.cache.clear();
    this.byBrand.clear();
    this.generation = this.index.generation;
  }

  /** The SearchResponse body for `query` (normalized here) and `limit`, from the cache if held. */
  json(query: string, limit: number): string {
    const q = normalizeQuery(query);
    // a lazily built index bumps its generation when it is built: build it before comparing,
    // so the body stored below belongs to the generation it was made from
    this.index.ready();
    if (this.index.generation !== this.generation) this.clear();
    const key = `${limit} ${q}`;
    const hit = this.cache.get(key);
    if (hit) return hit.json;
    const brands = this.index.search(q, limit);
    const json = this.assemble(q, brands);
    this.store(key, {
      json,
      ids: brands.map((b) => b.id),
    });
    return json;
  }

  /** The body the uncached path gives (no cache read or write). */
  uncached(query: string, limit: number): string {
    const q = normalizeQuery(query);
    return this.assemble(q, this.index.search(q, limit));
  }

  private assemble(q: string, brands: Brand[]): string {
    const matches = brands.map((b) => this.entries.entryJson(b)).join(",");
    return `{"matches":[${matches}],"query":${JSON.stringify(q)},"total":${brands.length}}`;
  }

  private store(key: string, value: Cached) {
    this.cache.set(key, value);
    // a body larger than the whole cache is not kept
    if (!this.cache.has(key)) return;
    for (const id of value.ids) {
      const keys = this.byBrand.get(id);
      if (keys) keys.add(key);
      else this.byBrand.set(id, new Set([key]));
    }
  }

  private unindex(key: string, value: Cached) {
    for (const id of value.ids) {
      const keys = this.byBrand.get(id);
      keys?.delete(key);
      if (keys?.size === 0) this.byBrand.delete(id);
    }
  }

  private evictBrand(id: number) {
    for (const key of [...(this.byBrand.get(id) ?? [])]) this.cache.delete(key);
  }
}
