import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { Principal } from "../../../src/quota/principal";
import { binValue, type Cell, type CellHint, latencyBin } from "../../../src/usage/analytics/cells";
import {
  type SeriesQuery,
  statusClass,
  type UsageSeries,
  usageSeries,
} from "../../../src/usage/analytics/series";
import type { UsageEvent, UsageEventStore } from "../../../src/usage/port";
import { describeUnless } from "../../support/skip";
import { type OpenedUsageStore, usageStoreKinds } from "../../support/usage-stores";

/**
 * A series grouped by brand with more groups than `limit` reads in two passes (the groups
 * ranked by cellCounts, then the top groups' cells and the filtered totals): its answer is the
 * one the fixture's events give, and the one a single read of every cell gives, on both stores.
 */

const DAYS = ["2025-04-07", "2025-04-08", "2025-04-09"];
const STATUSES = [200, 200, 304, 404, 429, 500, 200];

/** brand i has 14 - i events a day, of several statuses, buckets, keys and latencies */
function fixture(accountId: string): UsageEvent[] {
  const out: UsageEvent[] = [];
  DAYS.forEach((day, d) => {
    for (let b = 0; b < 14; b++)
      for (let j = 0; j < 14 - b; j++) {
        const status = STATUSES[(b + j + d) % STATUSES.length] as number;
        const ts = `${day}T${String(j).padStart(2, "0")}:${String(b).padStart(2, "0")}:00.000Z`;
        out.push({
          id: newId(Date.parse(ts)),
          ts,
          day,
          accountId,
          keyId: j % 3 === 0 ? "key-b" : "key-a",
          tier: "pro",
          bucket: j % 2 === 0 ? "svg" : "png",
          route: "/v1/svg/:slug",
          slug: `brand-${b}`,
          variant: "mono",
          format: j % 2 === 0 ? "svg" : "png",
          status,
          latencyMs: 0.5 + ((b * 7 + j * 3 + d) % 40) * 1.7,
          ...(status === 429 ? { count: 1 + (j % 4) } : {}),
        });
      }
    // traffic without a brand
    const ts = `${day}T20:00:00.000Z`;
    out.push({
      id: newId(Date.parse(ts)),
      ts,
      day,
      accountId,
      keyId: "key-a",
      tier: "pro",
      bucket: "search",
      route: "/v1/search",
      slug: null,
      variant: null,
      status: 200,
      latencyMs: 3,
    });
  });
  return out;
}

/** Counts and quantiles of events as the answer states them (the r-th smallest request's bin). */
function pointOf(events: UsageEvent[]) {
  const bins: number[] = [];
  let errors = 0;
  let rateLimited = 0;
  for (const e of events) {
    const n = e.count ?? 1;
    if (e.status === 429) rateLimited += n;
    else if (e.status >= 400) errors += n;
    for (let i = 0; i < n; i++) bins.push(latencyBin(e.latencyMs ?? 0));
  }
  bins.sort((x, y) => x - y);
  const requests = bins.length;
  const q = (p: number) =>
    requests === 0 ? null : binValue(bins[Math.max(1, Math.ceil(p * requests)) - 1] as number);
  return { requests, errors, rateLimited, p50: q(0.5), p95: q(0.95), p99: q(0.99) };
}

/** The groups brand x status_class of events: the top `limit` by requests (ties by id), (other). */
function expected(events: UsageEvent[], limit: number, days: string[]) {
  const byId = new Map<string, UsageEvent[]>();
  for (const e of events) {
    const id = `${e.slug ?? "(none)"}/${statusClass(e.status)}`;
    byId.set(id, [...(byId.get(id) ?? []), e]);
  }
  const ranked = [...byId].sort(
    ([x, ex], [y, ey]) =>
      pointOf(ey).requests - pointOf(ex).requests || (x < y ? -1 : x > y ? 1 : 0),
  );
  const group = (id: string, of: UsageEvent[]) => ({
    id,
    ...pointOf(of),
    series: days.map((day) => ({
      t: `${day}T00:00:00Z`,
      ...pointOf(of.filter((e) => e.day === day)),
    })),
  });
  const groups = ranked.slice(0, limit).map(([id, of]) => group(id, of));
  if (ranked.length > limit)
    groups.push(
      group(
        "(other)",
        ranked.slice(limit).flatMap(([, of]) => of),
      ),
    );
  return { totals: pointOf(events), groups };
}

/** The parts of an answer the expectation states. */
const stated = (s: UsageSeries) => ({
  totals: s.totals,
  groups: s.groups.map(({ id, requests, errors, rateLimited, p50, p95, p99, series }) => ({
    id,
    requests,
    errors,
    rateLimited,
    p50,
    p95,
    p99,
    series,
  })),
});

const principal = { accountId: "", tier: "pro", keyId: "key-a" } as Principal;
const NOW = new Date("2025-04-30T12:00:00Z");

for (const kind of await usageStoreKinds())
  describeUnless(kind.skip)(`grouped series in two passes: ${kind.name}`, () => {
    let opened: OpenedUsageStore;
    let store: UsageEventStore;
    const acc = newId();
    let events: UsageEvent[];
    beforeAll(async () => {
      setLogLevel("error");
      opened = await kind.open();
      store = opened.store;
      events = fixture(acc);
      await store.append(events.slice(0, 200));
      await store.append(events.slice(200));
      // another account's traffic on the same days is never counted
      await store.append(fixture(newId()).slice(0, 50));
    });
    afterAll(async () => {
      await store?.close();
      await opened?.drop();
      setLogLevel("info");
    });

    /** the store seen through its reads, noting the hints of each and the cellCounts calls */
    function spied() {
      const seen = { counts: 0, hints: [] as (CellHint | undefined)[] };
      const s = {
        cells: (...a: Parameters<UsageEventStore["cells"]>) => {
          seen.hints.push(a[4]);
          return store.cells(...a);
        },
        cellCounts: (...a: Parameters<UsageEventStore["cellCounts"]>) => {
          seen.counts++;
          return store.cellCounts(...a);
        },
      } as unknown as UsageEventStore;
      return { s, seen };
    }
    /**
     * the store without counts (no group to rank first) nor summed reads: every series one read
     * of every cell
     */
    const onePass = () =>
      ({
        cellCounts: async () => new Map(),
        cells: (...[a, v, from, to, hint]: Parameters<UsageEventStore["cells"]>) =>
          store.cells(a, v, from, to, hint?.summed ? undefined : hint),
      }) as unknown as UsageEventStore;
    const series = (s: UsageEventStore, q: SeriesQuery) =>
      usageSeries(s, { ...principal, accountId: acc }, q, NOW);
    const range = { from: DAYS[0], to: DAYS[2], group_by: "brand,status_class" };

    test("the store counts requests and cells per cell key without histograms; a keys hint reads those keys only", async () => {
      const counts = await store.cellCounts(acc, "day.b", DAYS[0] as string, DAYS[2] as string);
      const b0 = events.filter((e) => e.slug === "brand-0" && e.status === 200);
      expect(counts.get("brand-0|200")).toEqual({
        n: b0.length,
        cells: new Set(b0.map((e) => e.day)).size,
      });
      expect([...counts.values()].reduce((a, c) => a + c.n, 0)).toBe(pointOf(events).requests);
      const cells = await store.cells(acc, "day.b", DAYS[0] as string, DAYS[2] as string);
      expect([...counts.values()].reduce((a, c) => a + c.cells, 0)).toBe(
        cells.reduce((a, r) => a + r.cells.size, 0),
      );
      const rows = await store.cells(acc, "day.b", DAYS[0] as string, DAYS[2] as string, {
        keys: ["brand-0|200", "brand-3|404", "nope|200"],
      });
      expect(rows.map((r) => r.t)).toEqual(DAYS);
      for (const r of rows)
        expect([...r.cells.keys()].every((k) => k === "brand-0|200" || k === "brand-3|404")).toBe(
          true,
        );
      expect(rows.reduce((n, r) => n + (r.cells.get("brand-0|200")?.n ?? 0), 0)).toBe(b0.length);
    });

    test("a summed read: each period's cells added into one cell", async () => {
      for (const [view, from, to] of [
        ["day.bs", DAYS[0] as string, DAYS[2] as string],
        ["hour.b", `${DAYS[1]}T00`, `${DAYS[1]}T23`],
      ] as const) {
        const cells = await store.cells(acc, view, from, to);
        const summed = await store.cells(acc, view, from, to, { summed: true });
        expect(summed.map((r) => r.t)).toEqual(cells.map((r) => r.t));
        summed.forEach((r, i) => {
          const each = [...(cells[i]?.cells.values() ?? [])];
          const one = r.cells.get("") as Cell;
          expect([...r.cells.keys()]).toEqual([""]);
          expect([one.n, one.e, one.r]).toEqual([
            each.reduce((a, c) => a + c.n, 0),
            each.reduce((a, c) => a + c.e, 0),
            each.reduce((a, c) => a + c.r, 0),
          ]);
          const bins = new Map<number, number>();
          for (const c of each)
            for (let j = 0; j < c.h.length; j += 2)
              bins.set(
                c.h[j] as number,
                (bins.get(c.h[j] as number) ?? 0) + (c.h[j + 1] as number),
              );
          const got = new Map<number, number>();
          for (let j = 0; j < one.h.length; j += 2)
            got.set(one.h[j] as number, one.h[j + 1] as number);
          expect(got).toEqual(bins);
        });
      }
      // a series without filters or groups reads it: the answer of every cell
      for (const q of [
        { from: DAYS[0] as string, to: DAYS[2] as string },
        { from: DAYS[1] as string, to: DAYS[1] as string, granularity: "hour" as const },
      ]) {
        const { s, seen } = spied();
        const got = await series(s, q);
        expect(seen.hints).toEqual([{ summed: true }]);
        expect(got).toEqual(await series(onePass(), q));
        expect(got.totals).toEqual(pointOf(events.filter((e) => e.day >= q.from && e.day <= q.to)));
      }
    });

    test("top 10 brands x status_class: the top groups, (other) and totals the events give", async () => {
      const { s, seen } = spied();
      const got = await series(s, range);
      // two passes ran: counted, then the top groups' keys and the totals read
      expect(seen.counts).toBe(1);
      expect(seen.hints.some((h) => h?.keys !== undefined)).toBe(true);
      expect(got.groups).toHaveLength(11);
      expect(stated(got)).toEqual(expected(events, 10, DAYS));
      expect(got).toEqual(await series(onePass(), range));
    });

    test("with bucket=, hourly, and limit: the same answers as one read of every cell", async () => {
      const svg = events.filter((e) => e.bucket === "svg");
      const q = { ...range, bucket: "svg" as const, limit: 3 };
      expect(stated(await series(store, q))).toEqual(expected(svg, 3, DAYS));
      for (const query of [
        q,
        { ...range, limit: 1 },
        { ...range, group_by: "brand", limit: 5 },
        { ...range, group_by: "key,brand", key: "key-b" },
        { ...range, from: DAYS[1], to: DAYS[1], granularity: "hour" as const, limit: 4 },
      ]) {
        const { s, seen } = spied();
        expect(await series(s, query)).toEqual(await series(onePass(), query));
        expect(seen.counts).toBe(1);
      }
    });

    test("few cells for the periods of the range: every cell read once more, same answer", async () => {
      // 3 days of cells in a 366-day range: the two reads would seek 366 periods for them
      const q = { ...range, from: "2024-04-09", to: DAYS[2] };
      const { s, seen } = spied();
      const got = await series(s, q);
      expect(seen.counts).toBe(1);
      expect(seen.hints.length).toBeGreaterThan(0);
      expect(seen.hints.every((h) => h?.keys === undefined)).toBe(true);
      expect(got.groups.at(-1)?.other).toBe(true);
      expect(got).toEqual(await series(onePass(), q));
    });

    test("as many groups as the limit or fewer: every cell read once more, same answer", async () => {
      const q = { ...range, group_by: "brand", limit: 100 };
      const { s, seen } = spied();
      const got = await series(s, q);
      expect(got.groups.some((g) => g.other)).toBe(false);
      expect(got.groups).toHaveLength(15);
      expect(seen.hints.length).toBeGreaterThan(0);
      expect(seen.hints.every((h) => h?.keys === undefined)).toBe(true);
      expect(got).toEqual(await series(onePass(), q));
      // brand= pins the brand: one read
      const one = spied();
      await series(one.s, { ...range, brand: "brand-2", group_by: "brand,key" });
      expect(one.seen.counts).toBe(0);
    });
  });
