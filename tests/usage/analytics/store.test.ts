import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { Principal } from "../../../src/quota/principal";
import type { Granularity, Rollup } from "../../../src/usage/analytics/cells";
import { binValue, latencyBin, OTHER_BRAND, TOP_BRANDS } from "../../../src/usage/analytics/cells";
import { usageSeries } from "../../../src/usage/analytics/series";
import type { UsageEvent } from "../../../src/usage/event";
import type { CellHint, UsageLog } from "../../../src/usage/log/port";
import { describeUnless } from "../../support/skip";
import { type OpenedLog, usageLogKinds } from "../../support/usage-stores";
import { batchesOf, type Input } from "../util";

/**
 * The analytics projections (cells, misses) and the export page read on both stores, through
 * the service that answers GET /v1/analytics/usage.
 */

/** An event metered at `ts`. */
function ev(ts: string, over: Partial<Input> = {}): Partial<Input> {
  return {
    at: Date.parse(ts),
    accountId: "acc",
    keyId: "key-a",
    tier: "pro",
    bucket: "svg",
    route: "/v1/svg/:slug",
    slug: "github",
    variant: "mono",
    format: "svg",
    status: 200,
    latencyMs: 2,
    ...over,
  };
}

/** The log as the tests read it: appends counted before they resolve, cells by view name. */
function reader(log: UsageLog) {
  return {
    log,
    async append(events: Partial<Input>[]) {
      const n = await log.append(batchesOf(events));
      await log.settled();
      return n;
    },
    cells(
      accountId: string,
      view: `${Granularity}.${Rollup}`,
      from: string,
      to: string,
      hint?: CellHint,
    ) {
      const [g, r] = view.split(".") as [Granularity, Rollup];
      return log.cells(accountId, g, r, from, to, hint);
    },
    misses: (...a: Parameters<UsageLog["misses"]>) => log.misses(...a),
    async exportEvents(
      accountId: string,
      q: { from: string; to: string; before: string; after: string | null; limit: number },
    ): Promise<UsageEvent[]> {
      const page = await log.exportStream(accountId, { ...q, before: Date.parse(q.before) });
      const out: UsageEvent[] = [];
      for (let c = await page.next(); c; c = await page.next())
        for (const l of new TextDecoder().decode(c).split("\n")) if (l) out.push(JSON.parse(l));
      return out;
    },
    rebuildDaily: (progress?: (p: { day: string; events: number }) => void) =>
      log.rebuild(progress),
    close: () => log.close(),
  };
}

const principal = (accountId: string): Principal =>
  ({ accountId, tier: "pro", keyId: "key-a" }) as Principal;

const NOW = new Date("2025-03-31T12:00:00Z");

for (const kind of await usageLogKinds())
  describeUnless(kind.skip)(`analytics projections: ${kind.name}`, () => {
    let opened: OpenedLog;
    let store: ReturnType<typeof reader>;
    beforeAll(async () => {
      setLogLevel("error");
      opened = await kind.open({ now: () => NOW.getTime() });
      store = reader(opened.log);
    });
    afterAll(async () => {
      await opened?.drop();
      setLogLevel("info");
    });

    const series = (accountId: string, q: Parameters<typeof usageSeries>[2]) =>
      usageSeries(store.log, principal(accountId), q, NOW);

    test("a brand or key hint on the all rollup returns only that brand's or key's cells", async () => {
      const acc = newId();
      const day = "2025-03-20";
      await store.append([
        ev(`${day}T09:00:00Z`, { accountId: acc, slug: "GitHub" }),
        ev(`${day}T10:00:00Z`, { accountId: acc, slug: "gitlab", keyId: "key-b" }),
        ev(`${day}T11:00:00Z`, { accountId: acc, slug: "a.b c", status: 404 }),
        ev(`${day}T12:00:00Z`, { accountId: acc, slug: null, bucket: "search", keyId: "" }),
      ]);
      for (const view of ["day.all", "hour.all"] as const) {
        const every = await store.cells(
          acc,
          view,
          view.startsWith("day") ? day : `${day}T00`,
          view.startsWith("day") ? day : `${day}T23`,
        );
        expect(every.reduce((n, r) => n + r.cells.length, 0)).toBe(4);
        for (const hint of [
          { brand: "github" },
          { brand: "a.b c" },
          { brand: null },
          { key: "key-b" },
          { key: "" },
        ]) {
          // the all rollup's fields: brand, bucket, key, variant, format, status
          const at = "brand" in hint ? 0 : 2;
          const want = every
            .map((r) => ({
              t: r.t,
              cells: r.cells.filter((c) => c.f[at] === Object.values(hint)[0]),
            }))
            .filter((r) => r.cells.length > 0);
          const got = await store.cells(
            acc,
            view,
            view.startsWith("day") ? day : `${day}T00`,
            view.startsWith("day") ? day : `${day}T23`,
            hint,
          );
          expect(got.filter((r) => r.cells.length > 0)).toEqual(want);
          expect(want.length).toBe(1);
        }
      }
    });

    test("day series grouped by bucket: counts, zero-filled days, latency quantiles", async () => {
      const acc = newId();
      await store.append([
        ev("2025-03-01T10:00:00.000Z", { accountId: acc, latencyMs: 1 }),
        ev("2025-03-01T11:00:00.000Z", { accountId: acc, latencyMs: 10, status: 404 }),
        ev("2025-03-03T09:00:00.000Z", { accountId: acc, bucket: "png", format: "png" }),
        ev("2025-03-03T09:30:00.000Z", { accountId: acc, bucket: "search", format: undefined }),
      ]);
      const s = await series(acc, { from: "2025-03-01", to: "2025-03-03", group_by: "bucket" });
      expect(s.series.map((p) => [p.t, p.requests, p.errors])).toEqual([
        ["2025-03-01T00:00:00Z", 2, 1],
        ["2025-03-02T00:00:00Z", 0, 0],
        ["2025-03-03T00:00:00Z", 2, 0],
      ]);
      expect(s.totals.requests).toBe(4);
      expect(s.groups.map((g) => [g.id, g.requests])).toEqual([
        ["svg", 2],
        ["png", 1],
        ["search", 1],
      ]);
      const svg = s.groups[0];
      expect(svg?.p50).toBe(binValue(latencyBin(1)));
      expect(svg?.p99).toBe(binValue(latencyBin(10)));
      // no traffic: no latency
      expect(s.series[1]?.p50).toBeNull();
      expect(svg?.series.map((p) => p.requests)).toEqual([2, 0, 0]);
    });

    test("hour series: hour boundaries and UTC midnight", async () => {
      const acc = newId();
      await store.append([
        ev("2025-03-10T22:59:59.999Z", { accountId: acc }),
        ev("2025-03-10T23:00:00.000Z", { accountId: acc }),
        ev("2025-03-10T23:59:59.999Z", { accountId: acc }),
        ev("2025-03-11T00:00:00.000Z", { accountId: acc }),
      ]);
      const s = await series(acc, { from: "2025-03-10", to: "2025-03-11", granularity: "hour" });
      expect(s.series).toHaveLength(48);
      const byT = Object.fromEntries(s.series.map((p) => [p.t, p.requests]));
      expect(byT["2025-03-10T22:00:00Z"]).toBe(1);
      expect(byT["2025-03-10T23:00:00Z"]).toBe(2);
      expect(byT["2025-03-11T00:00:00Z"]).toBe(1);
      expect(s.totals.requests).toBe(4);
      const days = await series(acc, { from: "2025-03-10", to: "2025-03-11" });
      expect(days.series.map((p) => p.requests)).toEqual([3, 1]);
      // the default hourly range is the day `to`
      const one = await series(acc, { to: "2025-03-11", granularity: "hour" });
      expect([one.from, one.series.length, one.totals.requests]).toEqual(["2025-03-11", 24, 1]);
    });

    test("a folded burst of 429 refusals counts every refusal", async () => {
      const acc = newId();
      await store.append([
        ev("2025-03-12T08:00:00.000Z", { accountId: acc, status: 429, count: 7 }),
        ev("2025-03-12T08:00:01.000Z", { accountId: acc, status: 200 }),
      ]);
      const s = await series(acc, {
        from: "2025-03-12",
        to: "2025-03-12",
        group_by: "status_class",
      });
      expect(s.totals).toMatchObject({ requests: 8, rateLimited: 7, errors: 0 });
      expect(s.groups.map((g) => [g.status_class, g.requests, g.rateLimited])).toEqual([
        ["429", 7, 7],
        ["2xx", 1, 0],
      ]);
    });

    test("filters by key, bucket and brand; two group fields; limit and the (other) row", async () => {
      const acc = newId();
      const day = "2025-03-14T";
      await store.append([
        ev(`${day}01:00:00.000Z`, { accountId: acc, keyId: "k1", slug: "github" }),
        ev(`${day}01:00:01.000Z`, { accountId: acc, keyId: "k1", slug: "github" }),
        ev(`${day}01:00:02.000Z`, { accountId: acc, keyId: "k1", slug: "gitlab", status: 304 }),
        ev(`${day}01:00:03.000Z`, {
          accountId: acc,
          keyId: "k2",
          slug: "github",
          bucket: "png",
          format: "png",
          variant: "color",
        }),
        ev(`${day}01:00:04.000Z`, {
          accountId: acc,
          keyId: "",
          bucket: "domain",
          slug: null,
          variant: null,
          format: undefined,
          status: 404,
        }),
      ]);
      const q = { from: "2025-03-14", to: "2025-03-14" };
      expect((await series(acc, { ...q, key: "k1" })).totals.requests).toBe(3);
      expect((await series(acc, { ...q, bucket: "png" })).totals.requests).toBe(1);
      expect((await series(acc, { ...q, brand: "github" })).totals.requests).toBe(3);
      expect((await series(acc, { ...q, brand: "github", key: "k2" })).totals.requests).toBe(1);
      expect((await series(acc, { ...q, key: "nope" })).totals.requests).toBe(0);
      // filters read through the `all` rollup (per-brand documents, per-key index)
      expect((await series(acc, { ...q, brand: "GitHub", group_by: "key" })).totals.requests).toBe(
        3,
      );
      expect((await series(acc, { ...q, brand: "nope", group_by: "key" })).groups).toEqual([]);
      const byVariant = await series(acc, { ...q, key: "k1", group_by: "variant,format" });
      expect(byVariant.totals.requests).toBe(3);

      const two = await series(acc, { ...q, group_by: "key,brand" });
      expect(two.groupBy).toEqual(["key", "brand"]);
      expect(two.groups.map((g) => [g.id, g.key, g.brand, g.requests])).toEqual([
        ["k1/github", "k1", "github", 2],
        ["(bearer)/(none)", null, null, 1],
        ["k1/gitlab", "k1", "gitlab", 1],
        ["k2/github", "k2", "github", 1],
      ]);
      const top = await series(acc, { ...q, group_by: "key,brand", limit: 2 });
      expect(top.groups.map((g) => [g.id, g.requests, g.other ?? false])).toEqual([
        ["k1/github", 2, false],
        ["(bearer)/(none)", 1, false],
        ["(other)", 2, true],
      ]);
      const other = top.groups[2];
      expect(other?.series.find((p) => p.requests > 0)?.t).toBe("2025-03-14T00:00:00Z");

      const fmt = await series(acc, { ...q, group_by: "format,variant" });
      expect(fmt.groups.map((g) => [g.format, g.variant, g.requests])).toEqual([
        ["svg", "mono", 3],
        [null, null, 1],
        ["png", "color", 1],
      ]);
      const status = await series(acc, { ...q, group_by: "status" });
      expect(status.groups.map((g) => [g.status, g.requests])).toEqual([
        [200, 3],
        [304, 1],
        [404, 1],
      ]);
    });

    test("another account's events are never counted", async () => {
      const mine = newId();
      const theirs = newId();
      await store.append([
        ev("2025-03-15T05:00:00.000Z", { accountId: mine }),
        ev("2025-03-15T05:00:00.000Z", { accountId: theirs, keyId: "their-key" }),
        ev("2025-03-15T05:00:01.000Z", { accountId: theirs, keyId: "their-key" }),
      ]);
      const s = await series(mine, { from: "2025-03-15", to: "2025-03-15", group_by: "key" });
      expect(s.totals.requests).toBe(1);
      expect(s.groups.map((g) => g.key)).toEqual(["key-a"]);
      expect(
        (await series(mine, { from: "2025-03-15", to: "2025-03-15", key: "their-key" })).totals
          .requests,
      ).toBe(0);
    });

    test("a repeated query sees events appended to a period it has read", async () => {
      const acc = newId();
      await store.append([ev("2025-03-10T05:00:00.000Z", { accountId: acc, status: 404 })]);
      const q = { from: "2025-03-01", to: "2025-03-31", group_by: "brand,status_class" };
      const before = await series(acc, q);
      expect([before.totals.requests, before.totals.errors]).toEqual([1, 1]);
      const brandQ = { from: "2025-03-01", to: "2025-03-31", brand: "github", group_by: "key" };
      expect((await series(acc, brandQ)).totals.requests).toBe(1);
      // key and brand: the full-detail cells, which appends change in place
      const allQ = { from: "2025-03-01", to: "2025-03-31", group_by: "key,brand" };
      expect((await series(acc, allQ)).totals.requests).toBe(1);
      await store.append([
        ev("2025-03-10T06:00:00.000Z", { accountId: acc }),
        ev("2025-03-10T07:00:00.000Z", { accountId: acc, slug: "stripe", latencyMs: 900 }),
      ]);
      const after = await series(acc, q);
      expect([after.totals.requests, after.totals.errors]).toEqual([3, 1]);
      expect(after.groups.map((g) => [g.brand, g.status_class, g.requests])).toEqual([
        ["github", "2xx", 1],
        ["github", "4xx", 1],
        ["stripe", "2xx", 1],
      ]);
      expect(after.series.find((p) => p.t.startsWith("2025-03-10"))?.p99).toBe(
        binValue(latencyBin(900)),
      );
      expect((await series(acc, brandQ)).totals.requests).toBe(2);
      expect((await series(acc, allQ)).groups.map((g) => [g.brand, g.requests])).toEqual([
        ["github", 2],
        ["stripe", 1],
      ]);
    });

    test("events written before format was recorded: the image bucket is the format", async () => {
      const acc = newId();
      const old = ev("2025-03-16T05:00:00.000Z", { accountId: acc, bucket: "webp" });
      old.format = undefined;
      await store.append([old]);
      const s = await series(acc, { from: "2025-03-16", to: "2025-03-16", group_by: "format" });
      expect(s.groups.map((g) => [g.format, g.requests])).toEqual([["webp", 1]]);
    });

    test("misses are counted per account and across accounts", async () => {
      const a = newId();
      const b = newId();
      await store.append([
        ev("2025-03-17T05:00:00.000Z", {
          accountId: a,
          bucket: "domain",
          status: 404,
          miss: ["domain:acme.test"],
        }),
        ev("2025-03-17T06:00:00.000Z", {
          accountId: a,
          bucket: "domain",
          status: 404,
          miss: ["email:acme.test"],
        }),
        ev("2025-03-18T05:00:00.000Z", {
          accountId: b,
          bucket: "domain",
          status: 404,
          miss: ["domain:acme.test"],
        }),
        ev("2025-03-18T05:00:01.000Z", {
          accountId: b,
          bucket: "batch",
          miss: ["slug:nope.x", "slug:other"],
        }),
      ]);
      const mine = await store.misses(a, "2025-03-17", "2025-03-18");
      expect(Object.fromEntries(mine)).toEqual({ "domain:acme.test": 1, "email:acme.test": 1 });
      const all = await store.misses(null, "2025-03-17", "2025-03-18");
      expect(all.get("domain:acme.test")).toBe(2);
      expect(all.get("slug:nope.x")).toBe(1);
      expect((await store.misses(null, "2025-03-18", "2025-03-18")).get("email:acme.test")).toBe(
        undefined,
      );
    });

    test("export pages: ascending ids, no loss or repeat while events are appended", async () => {
      const acc = newId();
      const first = Array.from({ length: 5 }, (_, i) =>
        ev(`2025-03-20T10:00:0${i}.000Z`, { accountId: acc }),
      );
      await store.append([...first, ev("2025-03-20T10:00:00.500Z", { accountId: newId() })]);
      const q = { from: "2025-03-01", to: "2025-03-31", before: "2025-03-31T00:00:00Z" };
      const ts = (events: UsageEvent[]) => events.map((e) => e.ts);
      const tsOf = (events: Partial<Input>[]) =>
        events.map((e) => new Date(e.at as number).toISOString());
      const p1 = await store.exportEvents(acc, { ...q, after: null, limit: 3 });
      expect(ts(p1)).toEqual(tsOf(first.slice(0, 3)));
      // appended between two pages: a later event, and one on the next day
      const later = [
        ev("2025-03-20T11:00:00.000Z", { accountId: acc }),
        ev("2025-03-21T00:00:00.000Z", { accountId: acc }),
      ];
      await store.append(later);
      const p2 = await store.exportEvents(acc, { ...q, after: p1[2]?.id ?? null, limit: 3 });
      const p3 = await store.exportEvents(acc, { ...q, after: p2[2]?.id ?? null, limit: 3 });
      const all = [...p1, ...p2, ...p3];
      expect(ts(all)).toEqual(tsOf([...first, ...later]));
      const ids = all.map((e) => e.id);
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);
      expect(p3).toHaveLength(1);
      // the horizon: a batch holding an event metered from `before` on is left for a later read
      const early = await store.exportEvents(acc, {
        ...q,
        before: "2025-03-20T10:00:02.000Z",
        after: null,
        limit: 100,
      });
      expect(early).toHaveLength(0);
      const settled = await store.exportEvents(acc, {
        ...q,
        before: "2025-03-20T10:00:05.000Z",
        after: null,
        limit: 100,
      });
      expect(ts(settled)).toEqual(tsOf(first));
    });

    test("two writing processes at once: no count lost", async () => {
      const acc = newId();
      const other = reader(await opened.reopen());
      const batch = (k: number) =>
        Array.from({ length: 20 }, (_, i) =>
          ev(`2025-03-26T0${i % 3}:00:0${k}.${String(i).padStart(3, "0")}Z`, {
            accountId: acc,
            status: i % 5 === 0 ? 404 : 200,
          }),
        );
      // (each process writes one batch at a time: the recorder runs one write at a time)
      await Promise.all([store.append(batch(1)), other.append(batch(2))]);
      await Promise.all([store.append(batch(3)), other.append(batch(4))]);
      const s = await series(acc, {
        from: "2025-03-26",
        to: "2025-03-26",
        granularity: "hour",
        group_by: "status",
      });
      expect(s.totals).toMatchObject({ requests: 80, errors: 16 });
      expect(s.series.slice(0, 3).map((p) => p.requests)).toEqual([28, 28, 24]);
    });

    test("more than TOP_BRANDS brands in an hour: that many brand rows and (other), totals exact", async () => {
      const acc = newId();
      const day = "2025-03-18";
      const brands = Array.from({ length: TOP_BRANDS + 12 }, (_, i) => `brand-${i}`);
      // brand i has (i % 3) + 1 events; one event without a brand; two batches, so the brands
      // are admitted across batches
      const events = brands.flatMap((slug, i) =>
        Array.from({ length: (i % 3) + 1 }, (_, j) =>
          ev(`${day}T10:${String(j).padStart(2, "0")}:00.000Z`, {
            accountId: acc,
            slug,
            status: j === 1 ? 404 : 200,
            keyId: j === 2 ? "key-b" : "key-a",
          }),
        ),
      );
      events.push(ev(`${day}T10:30:00.000Z`, { accountId: acc, slug: null }));
      const half = Math.floor(events.length / 2);
      await store.append(events.slice(0, half));
      await store.append(events.slice(half));
      const total = events.length;
      const own = new Map(brands.slice(0, TOP_BRANDS).map((b, i) => [b, (i % 3) + 1]));
      const rest = total - 1 - [...own.values()].reduce((a, b) => a + b, 0);
      expect(rest).toBeGreaterThan(0);
      const want = [...own, ["(other brands)", rest] as const, ["(none)", 1] as const]
        .map(([id, n]) => [id, n] as [string, number])
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
      const byBrand = (g: "day" | "hour", group_by = "brand") =>
        series(acc, { from: day, to: day, granularity: g, group_by, limit: 100 });
      for (const g of ["day", "hour"] as const) {
        const s = await byBrand(g);
        expect(s.totals.requests).toBe(total);
        expect(s.groups.map((x) => [x.id, x.requests])).toEqual(want);
        const other = s.groups.find((x) => x.id === "(other brands)");
        expect(other?.brand).toBe(OTHER_BRAND);
        expect(other?.other).toBeUndefined();
        // the `all` rollup (brand with key) bounds brands the same way
        const bk = await byBrand(g, "brand,key");
        expect(bk.totals.requests).toBe(total);
        expect(new Set(bk.groups.map((x) => x.brand)).size).toBe(TOP_BRANDS + 2);
        // no brand asked: every event, whatever cell its brand fell in
        const bs = await series(acc, { from: day, to: day, granularity: g, group_by: "status" });
        expect(bs.totals.requests).toBe(total);
      }
      // stored cells: TOP_BRANDS + 2 brands (own ones, none, other) in each period, every event
      for (const [view, period] of [
        ["day.b", day],
        ["hour.b", `${day}T10`],
        ["day.all", day],
        ["hour.all", `${day}T10`],
      ] as const) {
        const rows = await store.cells(acc, view, period, period);
        const cells = rows[0]?.cells ?? [];
        expect(new Set(cells.map((c) => c.f[0])).size).toBe(TOP_BRANDS + 2);
        expect(cells.reduce((n, c) => n + c.n, 0)).toBe(total);
      }
      // brand=(other): the events of the brands past the first TOP_BRANDS
      const o = await series(acc, { from: day, to: day, brand: OTHER_BRAND });
      expect(o.totals.requests).toBe(rest);
      // brand= of a brand that has its own cells: exact; of one counted under (other): none
      const first = await series(acc, { from: day, to: day, brand: "brand-1", group_by: "key" });
      expect(first.totals.requests).toBe(2);
      const late = await series(acc, { from: day, to: day, brand: `brand-${TOP_BRANDS + 5}` });
      expect(late.totals.requests).toBe(0);
      // a rebuild keeps the brands the periods kept
      const live = await Promise.all([
        byBrand("day"),
        byBrand("hour"),
        byBrand("day", "brand,key"),
      ]);
      await store.rebuildDaily();
      expect(
        await Promise.all([byBrand("day"), byBrand("hour"), byBrand("day", "brand,key")]),
      ).toEqual(live);
    });

    test("a rebuild gives the same answers as the live projection", async () => {
      const q = { from: "2025-03-01", to: "2025-03-31", group_by: "bucket,status" };
      const accounts = [newId(), newId()];
      await store.append(
        accounts.flatMap((accountId, i) =>
          Array.from({ length: 30 }, (_, j) =>
            ev(`2025-03-2${j % 5}T0${j % 10}:00:00.000Z`, {
              accountId,
              status: [200, 404, 429, 500][(i + j) % 4] as number,
              latencyMs: j * 3.7,
              bucket: j % 3 === 0 ? "png" : "svg",
              miss: j % 7 === 0 ? [`slug:s${j}`] : undefined,
            }),
          ),
        ),
      );
      const hq = { from: "2025-03-24", to: "2025-03-24", granularity: "hour" as const };
      const live = await Promise.all(
        accounts.flatMap((a) => [series(a, q), series(a, hq), store.misses(a, q.from, q.to)]),
      );
      const progress: number[] = [];
      const r = await store.rebuildDaily((p) => progress.push(p.events));
      expect(r.events).toBeGreaterThanOrEqual(60);
      expect(progress.length).toBeGreaterThan(0);
      const rebuilt = await Promise.all(
        accounts.flatMap((a) => [series(a, q), series(a, hq), store.misses(a, q.from, q.to)]),
      );
      expect(rebuilt).toEqual(live);
      // idempotent
      await store.rebuildDaily();
      expect(
        await Promise.all(
          accounts.flatMap((a) => [series(a, q), series(a, hq), store.misses(a, q.from, q.to)]),
        ),
      ).toEqual(live);
      // and after a restart (embedded: replayed from the log; MongoDB: another process)
      const other = await opened.reopen();
      await other.settled();
      const again = await usageSeries(other, principal(accounts[0] as string), q, NOW);
      expect(again).toEqual(live[0] as Awaited<ReturnType<typeof series>>);
    });
  });
