import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { Batch } from "../../../src/usage/log/batch";
import { eventsOf } from "../../../src/usage/log/batch";
import { OTHER } from "../../../src/usage/log/period";
import type { UsageLog } from "../../../src/usage/log/port";
import { describeUnless } from "../../support/skip";
import { type OpenedLog, usageLogKinds } from "../../support/usage-stores";
import { accountEvents, batchesOf, collect, type Input } from "../util";

/**
 * One contract for both usage log adapters. The embedded adapter always runs; the MongoDB
 * adapter runs against MONGODB_URL or the run's FerretDB (tests/support/mongo.ts).
 */
const NOW = Date.parse("2025-09-30T12:00:00.000Z");
const at = (day: string, over: Partial<Input> = {}): Partial<Input> => ({
  at: Date.parse(`${day}T12:00:00.000Z`),
  ...over,
});
const copy = (b: Batch): Batch => ({ ...b, strings: [...b.strings] });

for (const kind of await usageLogKinds())
  describeUnless(kind.skip)(`usage log contract: ${kind.name}`, () => {
    let opened: OpenedLog;
    let log: UsageLog;
    beforeAll(async () => {
      setLogLevel("error");
      opened = await kind.open({ now: () => NOW });
      log = opened.log;
    });
    afterAll(async () => {
      await opened?.drop();
      setLogLevel("info");
    });
    const append = async (batches: Batch[]) => {
      const n = await log.append(batches);
      await log.settled();
      return n;
    };

    test("append stores each batch once: a retried or replayed batch is found by its id and not counted again", async () => {
      const accountId = newId();
      const batches = batchesOf([
        at("2025-05-01", { accountId, status: 200 }),
        at("2025-05-01", { accountId, status: 200 }),
        at("2025-05-01", { accountId, status: 404 }),
      ]);
      expect(await append(batches)).toBe(3);
      expect(await append(batches.map(copy))).toBe(0);
      const more = batchesOf([at("2025-05-01", { accountId })]);
      expect(await append([...batches.map(copy), ...more])).toBe(1);
      expect(await log.daily(accountId, "2025-05-01", "2025-05-01")).toEqual([
        { accountId, day: "2025-05-01", bucket: "svg", requests: 4, errors: 1, rateLimited: 0 },
      ]);
      expect(await log.holds([...batches, ...more])).toEqual([true, true]);
      expect(await log.holds([{ account: accountId, t0: 1, q: 1 }])).toEqual([false]);
    });

    test("another batch that happens to have a stored batch's id is stored too, under its own number", async () => {
      const accountId = newId();
      const t = Date.parse("2025-05-03T10:00:00.000Z");
      const [first] = batchesOf([{ accountId, at: t, slug: "a" }]) as [Batch];
      const [second] = batchesOf([{ accountId, at: t, slug: "b" }]) as [Batch];
      second.q = first.q;
      expect(await append([first])).toBe(1);
      expect(await append([copy(second)])).toBe(1);
      // and that one sent again is found again
      expect(await append([copy(second)])).toBe(0);
      const events = await accountEvents(log, accountId, "2025-05-03");
      expect(events.map((e) => e.slug).sort()).toEqual(["a", "b"]);
      expect(new Set(events.map((e) => e.id)).size).toBe(2);
    });

    test("daily: per day and bucket; errors are 4xx/5xx except 429, which counts apart; folded refusals count each", async () => {
      const accountId = newId();
      await append(
        batchesOf([
          at("2025-05-01", { accountId, bucket: "svg", status: 200 }),
          at("2025-05-01", { accountId, bucket: "svg", status: 429, count: 5 }),
          at("2025-05-01", { accountId, bucket: "svg", status: 500 }),
          at("2025-05-01", { accountId, bucket: "search", status: 200 }),
          at("2025-05-02", { accountId, bucket: "catalog", status: 404 }),
          at("2025-05-03", { accountId, bucket: "batch", status: 422 }),
          at("2025-05-04", { accountId, bucket: "svg", status: 200 }),
        ]),
      );
      expect(await log.daily(accountId, "2025-05-01", "2025-05-03")).toEqual([
        { accountId, day: "2025-05-01", bucket: "search", requests: 1, errors: 0, rateLimited: 0 },
        { accountId, day: "2025-05-01", bucket: "svg", requests: 7, errors: 1, rateLimited: 5 },
        { accountId, day: "2025-05-02", bucket: "catalog", requests: 1, errors: 1, rateLimited: 0 },
        { accountId, day: "2025-05-03", bucket: "batch", requests: 1, errors: 1, rateLimited: 0 },
      ]);
      expect(await log.daily(newId(), "2025-01-01", "2025-12-31")).toEqual([]);
    });

    test("events: an account's batches of a range, each event once, as recorded", async () => {
      const accountId = newId();
      const other = newId();
      const batches = batchesOf([
        at("2025-07-09", { accountId, slug: "github", variant: "mono", latencyMs: 2.25 }),
        at("2025-07-09", { accountId, keyId: "key-2", bucket: "png", format: "png" }),
        at("2025-07-10", { accountId }),
        at("2025-07-09", { accountId: other }),
      ]);
      await append(batches);
      await append(batches.slice(0, 1).map(copy));
      const day = (await collect(log.events(accountId, "2025-07-09", "2025-07-09"))).flatMap((b) =>
        eventsOf(b),
      );
      expect(day.map((e) => [e.keyId, e.bucket, e.slug, e.variant, e.latencyMs])).toEqual([
        ["key-1", "svg", "github", "mono", 2.25],
        ["key-2", "png", expect.any(String), null, 1.5],
      ]);
    });

    test("tallyOfDay: the day's requests by account, key, bucket and status, from the projection", async () => {
      const accountId = newId();
      await append(
        batchesOf([
          at("2025-08-05", { accountId, keyId: "k1", status: 200 }),
          at("2025-08-05", { accountId, keyId: "k1", status: 200 }),
          at("2025-08-05", { accountId, keyId: "k2", status: 429, count: 3 }),
          at("2025-08-06", { accountId, keyId: "k1", status: 200 }),
        ]),
      );
      const tally = (await collect(log.tallyOfDay("2025-08-05"))).filter(
        (t) => t.accountId === accountId,
      );
      expect(tally.sort((a, b) => a.keyId.localeCompare(b.keyId))).toEqual([
        { day: "2025-08-05", accountId, keyId: "k1", bucket: "svg", status: 200, events: 2 },
        { day: "2025-08-05", accountId, keyId: "k2", bucket: "svg", status: 429, events: 3 },
      ]);
    });

    test("cells: a brand's and a key's cells on hint; the brands past 50 of a day count as OTHER", async () => {
      const accountId = newId();
      const inputs: Partial<Input>[] = [];
      for (let i = 0; i < 52; i++) inputs.push(at("2025-08-10", { accountId, slug: `b${i}` }));
      inputs.push(at("2025-08-10", { accountId, slug: "B3", keyId: "other" }));
      await append(batchesOf(inputs));
      const all = await log.cells(accountId, "day", "b", "2025-08-10", "2025-08-10");
      const cells = all[0]?.cells ?? [];
      expect(cells.find((c) => c.f[0] === OTHER)?.n).toBe(2);
      expect(cells.find((c) => c.f[0] === "b3")?.n).toBe(2);
      const b3 = await log.cells(accountId, "day", "all", "2025-08-10", "2025-08-10", {
        brand: "b3",
      });
      expect(b3[0]?.cells.map((c) => [c.f[2], c.n]).sort()).toEqual([
        ["key-1", 1],
        ["other", 1],
      ]);
      const key = await log.cells(accountId, "hour", "k", "2025-08-10T00", "2025-08-10T23", {
        key: "other",
      });
      expect(key.map((r) => [r.t, r.cells.map((c) => c.n)])).toEqual([["2025-08-10T12", [1]]]);
    });

    test("rebuild recomputes the same projection from the log", async () => {
      const accountId = newId();
      await append(
        batchesOf([
          at("2025-08-01", { accountId, status: 200 }),
          at("2025-08-01", { accountId, status: 429 }),
          at("2025-08-02", { accountId, bucket: "domain", status: 404, miss: ["domain:x.test"] }),
        ]),
      );
      const before = await log.daily(accountId, "2025-08-01", "2025-08-31");
      const cells = await log.cells(accountId, "day", "all", "2025-08-01", "2025-08-31");
      const misses = await log.misses(accountId, "2025-08-01", "2025-08-31");
      const r = await log.rebuild();
      expect(r.events).toBeGreaterThanOrEqual(3);
      expect(await log.daily(accountId, "2025-08-01", "2025-08-31")).toEqual(before);
      expect(await log.cells(accountId, "day", "all", "2025-08-01", "2025-08-31")).toEqual(cells);
      expect(await log.misses(accountId, "2025-08-01", "2025-08-31")).toEqual(misses);
      expect(before).toHaveLength(2);
    });

    test("prune: events of older days go, their counts stay; hourly cells before the hour go", async () => {
      const accountId = newId();
      await append(
        batchesOf([
          at("2025-09-01", { accountId }),
          at("2025-09-02", { accountId }),
          at("2025-09-03", { accountId }),
        ]),
      );
      const r = await log.prune("2025-09-03", "2025-09-02T13");
      expect(r.events).toBeGreaterThanOrEqual(2);
      expect((await accountEvents(log, accountId, "2025-09-01")).length).toBe(0);
      expect((await accountEvents(log, accountId, "2025-09-03")).length).toBe(1);
      expect(
        (await log.daily(accountId, "2025-09-01", "2025-09-03")).map((d) => d.requests),
      ).toEqual([1, 1, 1]);
      const hours = await log.cells(accountId, "hour", "bs", "2025-09-01T00", "2025-09-03T23");
      expect(hours.map((h) => h.t)).toEqual(["2025-09-03T12"]);
    });

    test("two logs on one store (two processes) appending at once: every count kept", async () => {
      const second = await opened.reopen();
      const accountId = newId();
      for (let round = 0; round < 4; round++)
        await Promise.all(
          [log, second].map((l) =>
            l.append(
              batchesOf([
                at("2025-09-10", { accountId, status: 200 }),
                at("2025-09-10", { accountId, status: 429 }),
              ]),
            ),
          ),
        );
      await log.settled();
      await second.settled();
      expect(await second.daily(accountId, "2025-09-10", "2025-09-10")).toEqual([
        { accountId, day: "2025-09-10", bucket: "svg", requests: 16, errors: 0, rateLimited: 8 },
      ]);
    });
  });
