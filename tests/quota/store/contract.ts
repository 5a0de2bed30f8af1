import { describe, expect, test } from "bun:test";
import type { CounterStore } from "../../../src/quota/store/port";

/**
 * The behaviour every CounterStore adapter must have. Called once per adapter from
 * counter-store.test.ts; `store()` returns the adapter under test, `storeNow()` the time (epoch
 * seconds) by the clock the store judges expiry with: this process's, or redis-server's, which
 * keeps the real time when a run moves the clock ahead (tests/support/redis.ts).
 */
export function counterStoreContract(
  name: string,
  store: () => CounterStore,
  storeNow: () => Promise<number> = async () => Math.floor(Date.now() / 1000),
) {
  let n = 0;
  const key = (label: string) => `contract:${name}:${Date.now()}:${++n}:${label}`;
  const later = () => Math.floor(Date.now() / 1000) + 3600;

  describe(`CounterStore contract: ${name}`, () => {
    test("consume without a limit always adds one", async () => {
      const k = key("free");
      for (let i = 1; i <= 3; i++)
        expect(await store().consume(k, null, later())).toEqual({ allowed: true, count: i });
      expect(await store().read([k])).toEqual([3]);
    });

    test("consume refuses at the limit and a refusal changes nothing", async () => {
      const k = key("capped");
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await store().consume(k, 3, later()));
      expect(results).toEqual([
        { allowed: true, count: 1 },
        { allowed: true, count: 2 },
        { allowed: true, count: 3 },
        { allowed: false, count: 3 },
        { allowed: false, count: 3 },
      ]);
      expect(await store().read([k])).toEqual([3]);
    });

    test("a limit of 0 refuses everything", async () => {
      const k = key("zero");
      expect(await store().consume(k, 0, later())).toEqual({ allowed: false, count: 0 });
      expect(await store().read([k])).toEqual([0]);
    });

    test("concurrent consumes never pass the limit (check-and-increment is atomic)", async () => {
      const k = key("race");
      const results = await Promise.all(
        Array.from({ length: 40 }, () => store().consume(k, 25, later())),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
      expect(Math.max(...results.map((r) => r.count))).toBe(25);
      expect(await store().read([k])).toEqual([25]);
    });

    test("release gives one back and never goes below zero", async () => {
      const k = key("release");
      await store().consume(k, 2, later());
      await store().consume(k, 2, later());
      expect((await store().consume(k, 2, later())).allowed).toBe(false);
      await store().release(k);
      expect(await store().read([k])).toEqual([1]);
      expect((await store().consume(k, 2, later())).allowed).toBe(true);
      await store().release(k);
      await store().release(k);
      await store().release(k);
      expect(await store().read([k])).toEqual([0]);
      await store().release(key("never-written"));
    });

    test("read answers in the order asked, 0 for missing keys", async () => {
      const a = key("a");
      const b = key("b");
      await store().consume(b, null, later());
      await store().consume(b, null, later());
      expect(await store().read([a, b, a])).toEqual([0, 2, 0]);
      expect(await store().read([])).toEqual([]);
    });

    test("a counter whose expiry has passed reads as 0 and starts again", async () => {
      const k = key("expired");
      const past = (await storeNow()) - 5;
      await store().consume(k, null, past);
      expect(await store().read([k])).toEqual([0]);
      expect(await store().consume(k, null, later())).toEqual({ allowed: true, count: 1 });
    });

    test("addFrom adds each source to its target and leaves the sources", async () => {
      const old1 = key("old1");
      const old2 = key("old2");
      const fresh = key("fresh");
      const other = key("other");
      for (let i = 0; i < 4; i++) await store().consume(old1, null, later());
      for (let i = 0; i < 2; i++) await store().consume(old2, null, later());
      await store().consume(fresh, null, later());
      await store().addFrom(
        [
          { from: old1, to: fresh },
          { from: old2, to: fresh },
          { from: key("empty"), to: other },
        ],
        later(),
      );
      expect(await store().read([old1, old2, fresh, other])).toEqual([4, 2, 7, 0]);
      expect(await store().consume(fresh, 8, later())).toEqual({ allowed: true, count: 8 });
      expect(await store().consume(fresh, 8, later())).toEqual({ allowed: false, count: 8 });
      await store().addFrom([], later());
    });

    test("raiseTo raises counters and never lowers one", async () => {
      const low = key("low");
      const high = key("high");
      for (let i = 0; i < 5; i++) await store().consume(high, null, later());
      await store().raiseTo(
        [
          { key: low, value: 3 },
          { key: high, value: 2 },
        ],
        later(),
      );
      expect(await store().read([low, high])).toEqual([3, 5]);
      expect(await store().consume(low, 4, later())).toEqual({ allowed: true, count: 4 });
      await store().raiseTo([], later());
    });

    test("a floor raises the counter first, in the same step; a refusal keeps the raise", async () => {
      const k = key("floor");
      expect(await store().consume(k, 5, later(), { floor: 3 })).toEqual({
        allowed: true,
        count: 4,
      });
      // a floor below the counter changes nothing
      expect(await store().consume(k, 5, later(), { floor: 2 })).toEqual({
        allowed: true,
        count: 5,
      });
      expect(await store().consume(k, 9, later(), { floor: 8 })).toEqual({
        allowed: true,
        count: 9,
      });
      expect(await store().consume(k, 5, later(), { floor: 12 })).toEqual({
        allowed: false,
        count: 12,
      });
      expect(await store().read([k])).toEqual([12]);
      // concurrent consumes that carry the same floor count on from it, never past the limit
      const c = key("floor-race");
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store().consume(c, 6, later(), { floor: 4 })),
      );
      expect(results.filter((r) => r.allowed).map((r) => r.count)).toEqual([5, 6]);
      expect(await store().read([c])).toEqual([6]);
    });

    test("a seed key asked about is reported as present or missing", async () => {
      const k = key("seeded");
      const mark = key("mark");
      expect(await store().consume(k, null, later(), { seedKey: mark })).toEqual({
        allowed: true,
        count: 1,
        seeded: false,
      });
      await store().raiseTo([{ key: mark, value: 1 }], later());
      expect(await store().consume(k, null, later(), { seedKey: mark })).toEqual({
        allowed: true,
        count: 2,
        seeded: true,
      });
      expect(await store().consume(k, null, later())).toEqual({ allowed: true, count: 3 });
    });
  });
}
