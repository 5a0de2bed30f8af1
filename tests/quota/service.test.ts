import { describe, expect, test } from "bun:test";
import { utcDay } from "../../src/platform/day";
import { CircuitBreaker } from "../../src/quota/circuit-breaker";
import type { Principal } from "../../src/quota/principal";
import { countsAgainstQuota, QuotaService } from "../../src/quota/service";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import { dailyKey } from "../../src/quota/store/port";

const now = new Date("2031-05-06T12:00:00Z");
const today = utcDay(now);
const free = (keyId: string): Principal => ({ accountId: "a1", keyId, tier: "free", limits: null });

describe("QuotaService", () => {
  test("consume: limit, remaining and reset for the caller's tier", async () => {
    const q = new QuotaService(new MemoryCounterStore());
    const d = await q.consume(free("k1"), "search", now);
    expect(d).toEqual({
      allowed: true,
      limit: 30,
      remaining: 29,
      resetSeconds: 12 * 3600,
      counted: true,
    });
    const internal = await q.consume({ ...free("k2"), tier: "internal" }, "search", now);
    expect(internal).toMatchObject({ allowed: true, limit: null, remaining: null, counted: true });
  });

  test("an in-process store decides synchronously; a guarded remote one through a promise", async () => {
    const q = new QuotaService(new MemoryCounterStore());
    const d = q.consume(free("k1"), "svg", now);
    expect(d).not.toBeInstanceOf(Promise);
    expect(d).toMatchObject({ allowed: true, limit: 50, remaining: 49 });
    const guarded = new QuotaService(
      new MemoryCounterStore(),
      new CircuitBreaker({ timeoutMs: 100 }),
    );
    const p = guarded.consume(free("k1"), "svg", now);
    expect(p).toBeInstanceOf(Promise);
    expect(await p).toMatchObject({ allowed: true, limit: 50, remaining: 49 });
  });

  test("counters are per UTC day", async () => {
    const q = new QuotaService(new MemoryCounterStore());
    await q.consume(free("k1"), "svg", new Date("2031-05-06T23:59:59Z"));
    await q.consume(free("k1"), "svg", new Date("2031-05-07T00:00:00Z"));
    expect((await q.counts(["k1"], new Date("2031-05-06T10:00:00Z"))).svg).toBe(1);
    expect((await q.counts(["k1"], new Date("2031-05-07T10:00:00Z"))).svg).toBe(1);
  });

  test("carryOver adds the old keys' day to the new key", async () => {
    const q = new QuotaService(new MemoryCounterStore());
    for (let i = 0; i < 3; i++) await q.consume(free("old"), "svg", now);
    await q.consume(free("older"), "domain", now);
    expect(await q.carryOver(["old", "older"], "new", now)).toBe(true);
    const c = await q.counts(["new"], now);
    expect(c.svg).toBe(3);
    expect(c.domain).toBe(1);
    expect(c.batch).toBe(0);
  });

  test("the outcome rule: everything but 429 and 5xx counts", () => {
    expect([200, 304, 400, 401, 404, 422].every(countsAgainstQuota)).toBe(true);
    expect([429, 500, 502, 503].some(countsAgainstQuota)).toBe(false);
  });

  test("a remote store that lost the day's counters counts on from what this process served", async () => {
    // a guarded store (the remote path) whose data is lost, a re-seed that finishes while the
    // requests that found it empty are still arriving
    const store = new MemoryCounterStore();
    const q = new QuotaService(store, new CircuitBreaker({ timeoutMs: 1000 }));
    const six: Principal = { ...free("k6"), tier: "enterprise", limits: { svg: 6 } };
    let logged = 0;
    const events = () =>
      Array.from({ length: logged }, () => ({
        keyId: "k6",
        bucket: "svg" as const,
        day: today,
        status: 200,
      }));
    q.setReseeder(() => q.rebuildFromEvents(events(), { now }));
    await q.reseed("start");
    for (let i = 0; i < 4; i++) {
      expect(await q.consume(six, "svg", now)).toMatchObject({ allowed: true, remaining: 5 - i });
      logged++;
    }
    await store.close(); // the store restarts empty
    const first = await q.consume(six, "svg", now); // finds the seed mark missing: re-seeds
    expect(first).toMatchObject({ allowed: true, remaining: 1 });
    await q.reseed("wait for it"); // the re-seed (from the 4 logged events) is done
    const rest = await Promise.all(Array.from({ length: 9 }, () => q.consume(six, "svg", now)));
    expect(rest.filter((d) => d.allowed)).toHaveLength(1);
    expect(rest.map((d) => d.remaining)).toEqual(Array(9).fill(0));
    expect((await q.counts(["k6"], now)).svg).toBe(6);
  });

  test("rebuildFromEvents counts today's countable events and never lowers a counter", async () => {
    const store = new MemoryCounterStore();
    const q = new QuotaService(store);
    for (let i = 0; i < 5; i++) await q.consume(free("live"), "svg", now);
    const ev = (keyId: string, bucket: "svg" | "search", status: number, day = today) => ({
      keyId,
      accountId: "a1",
      bucket,
      day,
      status,
    });
    const r = await q.rebuildFromEvents(
      [
        ev("lost", "svg", 200),
        ev("lost", "svg", 404),
        ev("lost", "svg", 429),
        ev("lost", "svg", 500),
        ev("lost", "search", 422),
        ev("lost", "svg", 200, "2031-05-05"),
        ev("live", "svg", 200),
        ev("live", "svg", 200),
      ],
      { now },
    );
    expect(r).toEqual({ day: today, events: 5, counters: 3 });
    expect(
      await store.read([dailyKey(today, "lost", "svg"), dailyKey(today, "lost", "search")]),
    ).toEqual([2, 1]);
    expect((await q.counts(["live"], now)).svg).toBe(5);
  });

  test("rebuildFromEvents can attribute a revoked key's events to its successor", async () => {
    const q = new QuotaService(new MemoryCounterStore());
    await q.rebuildFromEvents(
      [
        { keyId: "revoked", accountId: "a1", bucket: "svg", day: today, status: 200 },
        { keyId: "current", accountId: "a1", bucket: "svg", day: today, status: 200 },
      ],
      { now, successor: async (keyId) => (keyId === "revoked" ? "current" : keyId) },
    );
    expect((await q.counts(["current"], now)).svg).toBe(2);
    expect((await q.counts(["revoked"], now)).svg).toBe(0);
  });
});
