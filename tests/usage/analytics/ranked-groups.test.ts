import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { Principal } from "../../../src/quota/principal";
import { binValue, latencyBin } from "../../../src/usage/analytics/cells";
import {
  type SeriesQuery,
  statusClass,
  type UsageSeries,
  usageSeries,
} from "../../../src/usage/analytics/series";
import type { UsageEvent } from "../../../src/usage/event";
import { batchesOfEvents } from "../../../src/usage/log/batch";
import type { UsageLog } from "../../../src/usage/log/port";
import { describeUnless } from "../../support/skip";
import { type OpenedLog, usageLogKinds } from "../../support/usage-stores";

/**
 * A series grouped by brand with more groups than `limit`: the top groups, the (other) row and
 * the totals are the ones the fixture's events give, on both stores.
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

for (const kind of await usageLogKinds())
  describeUnless(kind.skip)(`grouped series ranked: ${kind.name}`, () => {
    let opened: OpenedLog;
    let store: UsageLog;
    const acc = newId();
    let events: UsageEvent[];
    beforeAll(async () => {
      setLogLevel("error");
      opened = await kind.open({ now: () => NOW.getTime() });
      store = opened.log;
      events = fixture(acc);
      await store.append(batchesOfEvents(events.slice(0, 200)));
      await store.append(batchesOfEvents(events.slice(200)));
      // another account's traffic on the same days is never counted
      await store.append(batchesOfEvents(fixture(newId()).slice(0, 50)));
      await store.settled();
    });
    afterAll(async () => {
      await opened?.drop();
      setLogLevel("info");
    });

    const series = (q: SeriesQuery) => usageSeries(store, { ...principal, accountId: acc }, q, NOW);
    const range = { from: DAYS[0], to: DAYS[2], group_by: "brand,status_class" };

    test("top 10 brands x status_class: the top groups, (other) and totals the events give", async () => {
      const got = await series(range);
      expect(got.groups).toHaveLength(11);
      expect(stated(got)).toEqual(expected(events, 10, DAYS));
    });

    test("with bucket=, and limit: the groups the events give; other groupings total every event", async () => {
      const svg = events.filter((e) => e.bucket === "svg");
      expect(stated(await series({ ...range, bucket: "svg", limit: 3 }))).toEqual(
        expected(svg, 3, DAYS),
      );
      expect(stated(await series({ ...range, limit: 1 }))).toEqual(expected(events, 1, DAYS));
      const queries: SeriesQuery[] = [
        { ...range, group_by: "brand", limit: 5 },
        { ...range, group_by: "key,brand", key: "key-b" },
        { ...range, from: DAYS[1], to: DAYS[1], granularity: "hour", limit: 4 },
      ];
      for (const query of queries) {
        const want = events.filter(
          (e) =>
            (query.key === undefined || e.keyId === query.key) &&
            e.day >= (query.from as string) &&
            e.day <= (query.to as string),
        );
        expect((await series(query)).totals).toEqual(pointOf(want));
      }
    });

    test("a long range with few days of cells, and as many groups as the limit: the same groups", async () => {
      const long = await series({ ...range, from: "2024-04-09", to: DAYS[2] });
      expect(long.groups.at(-1)?.other).toBe(true);
      expect(long.groups.map((g) => [g.id, g.requests])).toEqual(
        expected(events, 10, DAYS).groups.map((g) => [g.id, g.requests]),
      );
      const all = await series({ ...range, group_by: "brand", limit: 100 });
      expect(all.groups.some((g) => g.other)).toBe(false);
      expect(all.groups).toHaveLength(15);
    });
  });
