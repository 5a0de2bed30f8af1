import { describe, expect, test } from "bun:test";
import { Lru } from "../../src/platform/cache";

describe("Lru", () => {
  test("keeps at most maxEntries values, dropping the least recently used", () => {
    const c = new Lru<string, number>(3);
    for (const k of ["a", "b", "c"]) c.set(k, k.charCodeAt(0));
    expect(c.get("a")).toBe(97); // a is now the most recent
    c.set("d", 100);
    expect(c.size).toBe(3);
    expect(c.get("b")).toBeUndefined();
    expect([c.get("a"), c.get("c"), c.get("d")]).toEqual([97, 99, 100]);
  });

  test("keeps both bounds: the entry count and the sum of the sizes", () => {
    const c = new Lru<number, string>(4, 10, (s) => s.length);
    for (let i = 0; i < 6; i++) c.set(i, "x");
    expect(c.size).toBe(4);
    expect(c.get(0)).toBeUndefined();
    c.set(10, "yyyyyyyy");
    expect(c.weight).toBeLessThanOrEqual(10);
    expect(c.get(10)).toBe("yyyyyyyy");
    expect(c.size).toBe(3);
    // a value larger than the whole size bound is not kept
    c.set(11, "z".repeat(11));
    expect(c.get(11)).toBeUndefined();
  });

  test("a null value is kept and told apart from a miss; delete and clear", () => {
    const c = new Lru<string, number | null>(2);
    c.set("none", null);
    expect(c.get("none")).toBeNull();
    expect(c.get("other")).toBeUndefined();
    c.delete("none");
    expect(c.get("none")).toBeUndefined();
    c.set("a", 1);
    c.clear();
    expect(c.size).toBe(0);
  });

  test("a cache of a million entries costs nothing until it fills", () => {
    const before = process.memoryUsage().heapUsed;
    const caches = Array.from({ length: 20 }, () => new Lru<number, number>(1_000_000));
    caches[0]?.set(1, 1);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(50 * 1024 * 1024);
  });
});
