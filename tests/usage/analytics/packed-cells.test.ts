import { expect, test } from "bun:test";
import {
  type Cell,
  CellProjection,
  type PeriodCells,
  VIEWS,
  type View,
} from "../../../src/usage/analytics/cells";
import { cellMap, isPacked } from "../../../src/usage/analytics/packed";
import type { UsageEvent } from "../../../src/usage/port";
import { event } from "../util";

/**
 * An account's past days are packed into flat arrays once its events move on; reads of packed
 * periods must give what the maps gave. The reference: each day's events counted alone into a
 * fresh projection, where nothing is ever packed.
 */

const BUCKETS = ["svg", "png", "search", "catalog"] as const;
const STATUSES = [200, 200, 200, 304, 404, 429, 500];

/** `count` events of `accountId` on `day`, spread over its hours, groups varied by `seed`. */
function eventsOn(accountId: string, day: string, count: number, seed: number): UsageEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed * 31 + i * 7;
    const bucket = BUCKETS[k % BUCKETS.length] as (typeof BUCKETS)[number];
    const image = bucket === "svg" || bucket === "png";
    const ts = `${day}T${String((i * 5) % 24).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}:00.000Z`;
    const status = STATUSES[k % STATUSES.length] as number;
    return event({
      ts,
      accountId,
      keyId: `key-${k % 3}`,
      bucket,
      slug: bucket === "search" ? null : `brand-${k % 5}`,
      variant: image ? ["mono", "color"][k % 2] : null,
      format: image ? bucket : undefined,
      status,
      latencyMs: 0.5 + (k % 40),
      count: status === 429 ? 1 + (k % 4) : undefined,
      miss: status === 404 ? [`slug:missing-${k % 3}`] : undefined,
    });
  });
}

/** A map's cells with each histogram in bin order (bins are summed in any order). */
const normal = (cells: PeriodCells): [string, Cell][] =>
  [...cells]
    .map(([k, c]): [string, Cell] => {
      const pairs: [number, number][] = [];
      for (let i = 0; i < c.h.length; i += 2) pairs.push([c.h[i] as number, c.h[i + 1] as number]);
      pairs.sort((a, b) => a[0] - b[0]);
      return [k, { n: c.n, e: c.e, r: c.r, h: pairs.flat() }];
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));

/** Every period of a view read back, as sorted plain data. */
function read(
  p: CellProjection,
  accountId: string,
  view: View,
  hint?: { brand?: string; key?: string },
) {
  return p
    .periods(accountId, view, "2025-01-01", "2025-12-31T23", hint)
    .map((row) => [row.t, normal(cellMap(row.cells))] as const)
    .filter(([, cells]) => cells.length > 0)
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

const DAYS = Array.from({ length: 12 }, (_, i) => `2025-03-${String(i + 1).padStart(2, "0")}`);

test("packed past days read the same as maps: every view, hints, late events, misses", () => {
  const live = new CellProjection();
  const byDay = new Map<string, UsageEvent[]>();
  const add = (events: UsageEvent[]) => {
    live.addAll(events);
    for (const e of events) byDay.set(e.day, [...(byDay.get(e.day) ?? []), e]);
  };
  DAYS.forEach((day, i) => {
    add(eventsOn("acc-a", day, 40 + i, i));
    add(eventsOn("acc-b", day, 10, 100 + i));
  });
  // days before the last two are packed, with their hours
  const a = live.accounts.get("acc-a");
  expect(a?.day.size).toBe(2);
  expect(a?.past?.day.segs).toBe(DAYS.length - 2);
  expect(a?.past?.hour.segs).toBeGreaterThan(DAYS.length);
  expect(
    isPacked(
      live.periods("acc-a", "day.all", DAYS[0] as string, DAYS[0] as string)[0]?.cells ?? new Map(),
    ),
  ).toBe(true);
  // a derived rollup read before a late event, then the late event takes its day back into maps
  read(live, "acc-a", "day.bs");
  // brand and key filters read before it too: more than the copies kept, the last ones again
  const hints = [
    ...[0, 1, 2, 3, 4, 9].map((i) => ({ brand: `brand-${i}` })),
    ...[0, 1, 2].map((i) => ({ key: `key-${i}` })),
    { brand: "brand-2" },
  ];
  for (const hint of hints)
    for (const view of ["day.all", "hour.all"] as View[]) read(live, "acc-a", view, hint);
  add(eventsOn("acc-a", DAYS[2] as string, 7, 500));
  // and an event of a day never seen before, earlier than every packed one
  add(eventsOn("acc-a", "2025-02-20", 3, 600));
  // the account moves on again: the late day is packed a second time
  add(eventsOn("acc-a", "2025-03-13", 5, 700));
  add(eventsOn("acc-a", "2025-03-14", 5, 800));

  const reference = (accountId: string, view: View, hint?: { brand?: string; key?: string }) =>
    [...byDay.values()]
      .flatMap((events) => {
        const alone = new CellProjection();
        alone.addAll(events.filter((e) => e.accountId === accountId));
        return read(alone, accountId, view, hint);
      })
      .sort((x, y) => (x[0] < y[0] ? -1 : 1));

  for (const accountId of ["acc-a", "acc-b"]) {
    for (const view of VIEWS)
      expect(read(live, accountId, view)).toEqual(reference(accountId, view));
    for (const hint of [{ brand: "brand-2" }, { key: "key-1" }, { brand: null as never }])
      for (const view of ["day.all", "hour.all"] as View[])
        expect(read(live, accountId, view, hint)).toEqual(reference(accountId, view, hint));
  }
  // a range inside the packed days, hour by hour
  const hours = live.periods("acc-a", "hour.all", "2025-03-04T05", "2025-03-04T15");
  expect(hours.length).toBeGreaterThan(0);
  expect(hours.every((r) => r.t >= "2025-03-04T05" && r.t <= "2025-03-04T15")).toBe(true);
  // every view's periods (the MongoDB rebuild's input) hold each period once
  const seen = new Map<string, number>();
  for (const [view, t, cells] of live.viewPeriods(live.accounts.get("acc-a") as never)) {
    seen.set(`${view} ${t}`, (seen.get(`${view} ${t}`) ?? 0) + 1);
    if (view === "day.bs") {
      const want = reference("acc-a", "day.bs").find(([rt]) => rt === t)?.[1];
      expect(normal(cells)).toEqual(want ?? []);
    }
  }
  expect([...seen.values()].every((n) => n === 1)).toBe(true);
  expect(seen.size).toBe(
    VIEWS.reduce((n, v) => n + live.periods("acc-a", v, "2025-01-01", "2025-12-31T23").length, 0),
  );
});
