import { describe, expect, test } from "bun:test";
import { RenderCache } from "../../src/assets/render-cache";

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe("RenderCache", () => {
  test("stays within its byte budget, evicting the least recently used", async () => {
    const cache = new RenderCache(100);
    await cache.get("a", async () => bytes(40));
    await cache.get("b", async () => bytes(40));
    await cache.get("a", async () => bytes(40, 9)); // hit: a becomes most recent
    await cache.get("c", async () => bytes(40)); // 120 > 100: evicts b, not a
    expect(cache.has("a")).toBe(true);
    expect(cache.has("b")).toBe(false);
    expect(cache.has("c")).toBe(true);
    const s = cache.stats();
    expect(s.bytes).toBe(80);
    expect(s.evictions).toBe(1);
    expect(s.hits).toBe(1);
    expect(s.misses).toBe(3);
    expect((await cache.get("a", async () => bytes(1)))[0]).toBe(1); // cached value, not re-rendered
  });

  test("an entry larger than the whole budget is returned but not cached", async () => {
    const cache = new RenderCache(10);
    const out = await cache.get("big", async () => bytes(11));
    expect(out.length).toBe(11);
    expect(cache.has("big")).toBe(false);
    expect(cache.stats().bytes).toBe(0);
  });

  test("concurrent gets of one key share one render", async () => {
    const cache = new RenderCache(1000);
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const produce = async () => {
      runs++;
      await gate;
      return bytes(5);
    };
    const all = Promise.all([
      cache.get("k", produce),
      cache.get("k", produce),
      cache.get("k", produce),
    ]);
    release();
    const [a, b, c] = await all;
    expect(runs).toBe(1);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(cache.stats().coalesced).toBe(2);
  });

  test("a failed render is not cached; the next get tries again", async () => {
    const cache = new RenderCache(1000);
    await expect(cache.get("k", async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    expect(cache.has("k")).toBe(false);
    expect((await cache.get("k", async () => bytes(3))).length).toBe(3);
  });
});
