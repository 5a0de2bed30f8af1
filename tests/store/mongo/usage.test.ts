import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db, MongoClient } from "mongodb";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { MongoUsageStore } from "../../../src/store/mongo/usage";
import type { PeriodRow } from "../../../src/usage/analytics/cells";
import { cellMap } from "../../../src/usage/analytics/packed";
import type { UsageEvent } from "../../../src/usage/port";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { event } from "../../usage/util";

/**
 * The MongoDB usage store's own layout: writer slots, projection documents fetched by `_id`
 * through per-account manifests, and a rebuild that folds every earlier layout into one.
 */
const mongo = await mongoUrl();

describe.skipIf(!mongo.url)(`MongoDB usage store layout ${skipNote(mongo)}`.trim(), () => {
  let client: MongoClient;
  let db: Db;
  let Store: typeof MongoUsageStore;
  beforeAll(async () => {
    setLogLevel("error");
    const { MongoClient } = await import("mongodb");
    Store = (await import("../../../src/store/mongo/usage")).MongoUsageStore;
    client = new MongoClient(mongo.url as string);
    db = client.db(testDbName("bapi_usage_layout"));
    await Store.ensureIndexes(db);
  });
  afterAll(async () => {
    await db?.dropDatabase();
    await client?.close();
    setLogLevel("info");
  });

  const at = (ts: string, over: Partial<UsageEvent> = {}) => event({ ts, ...over });
  /** the `_id`s of an account's usage_daily documents, sorted */
  const dailyIds = async (accountId: string) =>
    (
      await db
        .collection<{ _id: string }>("usage_daily")
        .find({ accountId, p: { $exists: true } })
        .toArray()
    )
      .map((d) => d._id)
      .sort();

  test("processes hold one writer slot each; a released slot is taken over and its counts kept", async () => {
    const accountId = newId();
    const a = new Store(db);
    const b = new Store(db);
    await a.append([at("2025-10-01T10:00:00.000Z", { accountId })]);
    await b.append([at("2025-10-01T11:00:00.000Z", { accountId })]);
    const slots = await db.collection<{ _id: string }>("usage_writers").find({}).toArray();
    expect(slots.map((s) => s._id).sort()).toEqual(["0", "1"]);
    // each slot's documents of the month, by exact `_id`
    expect(await dailyIds(accountId)).toEqual([`${accountId}|2025-10|0`, `${accountId}|2025-10|1`]);

    // a stops; c takes its slot over and adds to its documents
    await a.close();
    const c = new Store(db);
    await c.append([
      at("2025-10-01T12:00:00.000Z", { accountId, status: 404 }),
      at("2025-10-02T12:00:00.000Z", { accountId }),
    ]);
    const after = await db.collection<{ _id: string }>("usage_writers").find({}).toArray();
    expect(after.map((s) => s._id).sort()).toEqual(["0", "1"]);
    expect(await c.daily(accountId, "2025-10-01", "2025-10-31")).toEqual([
      { accountId, day: "2025-10-01", bucket: "svg", requests: 3, errors: 1, rateLimited: 0 },
      { accountId, day: "2025-10-02", bucket: "svg", requests: 1, errors: 0, rateLimited: 0 },
    ]);
    // another process's read sees the same (documents listed in each slot's manifest)
    const reader = new Store(db);
    expect(await reader.daily(accountId, "2025-10-01", "2025-10-31")).toEqual(
      await c.daily(accountId, "2025-10-01", "2025-10-31"),
    );
    const cells = await reader.cells(accountId, "day.bs", "2025-10-01", "2025-10-02");
    expect(
      cells.reduce((n, r) => n + [...cellMap(r.cells).values()].reduce((m, x) => m + x.n, 0), 0),
    ).toBe(4);
    await Promise.all([b.close(), c.close()]);
  });

  test("a month of many cells is also split by brand and key: filtered reads fetch one part, live and rebuilt", async () => {
    const accountId = newId();
    const s = new Store(db);
    const brands = Array.from({ length: 40 }, (_, i) => `brand-${i}`);
    const day = (d: number) => `2025-11-${String(d).padStart(2, "0")}`;
    // 30 days x 40 brands x 5 keys: 6,000 cells in November; one event in a small December
    const events = Array.from({ length: 30 }, (_, d) =>
      brands.flatMap((slug) =>
        Array.from({ length: 5 }, (_, k) =>
          at(`${day(d + 1)}T10:00:00.000Z`, { accountId, slug, keyId: `k${k}` }),
        ),
      ),
    ).flat();
    events.push(at("2025-12-02T10:00:00.000Z", { accountId, slug: "brand-1", keyId: "k2" }));
    await s.append(events);
    const parts = async (c: string) =>
      (await db.collection(c).find({ accountId, p: "2025-11" }).toArray()).length;
    expect(await parts("usage_view_day_all_b")).toBe(8);
    expect(await parts("usage_view_day_all_k")).toBe(4);
    expect(
      await db.collection("usage_view_day_all_b").countDocuments({ accountId, p: "2025-12" }),
    ).toBe(0);
    const total = (rows: PeriodRow[]) =>
      rows.reduce((sum, r) => sum + [...cellMap(r.cells).values()].reduce((m, c) => m + c.n, 0), 0);
    const check = async (store: MongoUsageStore) => {
      for (const slug of brands)
        expect(
          total(
            await store.cells(accountId, "day.all", "2025-11-01", "2025-12-31", { brand: slug }),
          ),
        ).toBe(slug === "brand-1" ? 151 : 150);
      expect(
        total(await store.cells(accountId, "day.all", "2025-11-01", "2025-12-31", { key: "k2" })),
      ).toBe(1201);
      expect(
        total(
          await store.cells(accountId, "day.all", "2025-11-01", "2025-12-31", { brand: "none" }),
        ),
      ).toBe(0);
    };
    await check(s);
    await check(new Store(db));
    await s.rebuildDaily();
    expect(await parts("usage_view_day_all_b")).toBe(8);
    await check(new Store(db));
    await s.close();
  }, 60_000);

  test("rebuild carries usage_daily rows and view documents of an earlier layout over, then reads them by _id", async () => {
    const accountId = newId();
    // counts of a pruned day, as an earlier version stored them (one row per day, bucket and writer)
    await db.collection<{ _id: string }>("usage_daily").insertMany([
      {
        _id: `${accountId}|2024-01-05|png|old-writer`,
        accountId,
        day: "2024-01-05",
        bucket: "png",
        requests: 7,
        errors: 2,
        rateLimited: 1,
        writer: "old-writer",
      } as { _id: string },
    ]);
    // misses of a pruned day, in a document per third of a month of an earlier version
    await db.collection<{ _id: string }>("usage_view_miss").insertOne({
      _id: `${accountId}|2024-01-1|old-writer`,
      accountId,
      p: "2024-01-1",
      w: "old-writer",
      v: "x",
      c: JSON.stringify({ "2024-01-05": { "slug:gone": 3 } }),
    } as { _id: string });
    const s = new Store(db);
    await s.append([at("2025-12-01T10:00:00.000Z", { accountId })]);
    await s.rebuildDaily();
    expect(await s.daily(accountId, "2024-01-01", "2025-12-31")).toEqual([
      { accountId, day: "2024-01-05", bucket: "png", requests: 7, errors: 2, rateLimited: 1 },
      { accountId, day: "2025-12-01", bucket: "svg", requests: 1, errors: 0, rateLimited: 0 },
    ]);
    expect(await s.misses(accountId, "2024-01-01", "2024-01-31")).toEqual(
      new Map([["slug:gone", 3]]),
    );
    // one document per group and month, all of the rebuild's slot
    expect(await dailyIds(accountId)).toEqual([`${accountId}|2024-01|r`, `${accountId}|2025-12|r`]);
    // idempotent
    await s.rebuildDaily();
    expect(await new Store(db).daily(accountId, "2024-01-01", "2025-12-31")).toHaveLength(2);
    await s.close();
  });

  test("at start, a database of the earlier layout is carried over without a rebuild", async () => {
    const { MongoClient } = await import("mongodb");
    const other = new MongoClient(mongo.url as string);
    const old = other.db(testDbName("bapi_usage_carry"));
    try {
      const accountId = newId();
      await old.collection<{ _id: string }>("usage_daily").insertMany([
        {
          _id: `${accountId}|2025-02-03|svg|w1`,
          accountId,
          day: "2025-02-03",
          bucket: "svg",
          requests: 4,
          errors: 1,
          rateLimited: 0,
          writer: "w1",
        },
        {
          _id: `${accountId}|2025-02-03|svg|w2`,
          accountId,
          day: "2025-02-03",
          bucket: "svg",
          requests: 2,
          errors: 0,
          rateLimited: 1,
          writer: "w2",
        },
      ] as never[]);
      await old.collection<{ _id: string }>("usage_view_day_bs").insertOne({
        _id: `${accountId}|2025-02-1|w1`,
        accountId,
        p: "2025-02-1",
        w: "w1",
        v: "x",
        c: JSON.stringify({ "2025-02-03": { "svg|200": [4, 0, 0, 10, 4] } }),
      } as { _id: string });
      await Store.ensureIndexes(old);
      // a second start finds nothing left to carry over
      await Store.ensureIndexes(old);
      const s = new Store(old);
      expect(await s.daily(accountId, "2025-02-01", "2025-02-28")).toEqual([
        { accountId, day: "2025-02-03", bucket: "svg", requests: 6, errors: 1, rateLimited: 1 },
      ]);
      const rows = await s.cells(accountId, "day.bs", "2025-02-01", "2025-02-28");
      expect(rows.map((r) => [r.t, cellMap(r.cells).get("svg|200")?.n])).toEqual([
        ["2025-02-03", 4],
      ]);
    } finally {
      await old.dropDatabase();
      await other.close();
    }
  });
});
