import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db, MongoClient } from "mongodb";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { MongoUsageStore } from "../../../src/store/mongo/usage";
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

  test("processes hold one writer slot each; a released slot is taken over and its counts kept", async () => {
    const accountId = newId();
    const a = new Store(db);
    const b = new Store(db);
    await a.append([at("2025-10-01T10:00:00.000Z", { accountId })]);
    await b.append([at("2025-10-01T11:00:00.000Z", { accountId })]);
    const slots = await db.collection<{ _id: string }>("usage_writers").find({}).toArray();
    expect(slots.map((s) => s._id).sort()).toEqual(["0", "1"]);
    // each slot's documents of the month, by exact `_id`
    const ids = (
      await db
        .collection<{ _id: string }>("usage_daily")
        .find({ accountId, p: { $exists: true } })
        .toArray()
    ).map((d) => d._id);
    expect(ids.sort()).toEqual([`${accountId}|2025-10|0`, `${accountId}|2025-10|1`]);

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
    expect(cells.reduce((n, r) => n + [...r.cells.values()].reduce((m, x) => m + x.n, 0), 0)).toBe(
      4,
    );
    await Promise.all([b.close(), c.close()]);
  });

  test("a brand= read fetches only its brand's part of the daily all rollup, with every cell of the brand", async () => {
    const accountId = newId();
    const s = new Store(db);
    const brands = Array.from({ length: 40 }, (_, i) => `brand-${i}`);
    await s.append(
      brands.flatMap((slug, i) =>
        Array.from({ length: 1 + (i % 3) }, (_, j) =>
          at(`2025-11-0${1 + j}T10:00:00.000Z`, { accountId, slug, keyId: `k${i % 5}` }),
        ),
      ),
    );
    const parts = await db
      .collection("usage_view_day_all_b")
      .find({ accountId }, { projection: { _id: 1 } })
      .toArray();
    expect(parts.length).toBeGreaterThan(1);
    for (const [i, slug] of brands.entries()) {
      const rows = await s.cells(accountId, "day.all", "2025-11-01", "2025-11-30", { brand: slug });
      const n = rows.reduce(
        (sum, r) => sum + [...r.cells.values()].reduce((m, c) => m + c.n, 0),
        0,
      );
      expect(n).toBe(1 + (i % 3));
    }
    const byKey = await s.cells(accountId, "day.all", "2025-11-01", "2025-11-30", { key: "k2" });
    expect(
      byKey.reduce((sum, r) => sum + [...r.cells.values()].reduce((m, c) => m + c.n, 0), 0),
    ).toBe(brands.reduce((n, _, i) => n + (i % 5 === 2 ? 1 + (i % 3) : 0), 0));
    await s.close();
  });

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
    const ids = (
      await db
        .collection<{ _id: string }>("usage_daily")
        .find({ accountId, p: { $exists: true } })
        .toArray()
    ).map((d) => d._id);
    expect(ids.sort()).toEqual([`${accountId}|2024-01|r`, `${accountId}|2025-12|r`]);
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
      expect(rows.map((r) => [r.t, r.cells.get("svg|200")?.n])).toEqual([["2025-02-03", 4]]);
    } finally {
      await old.dropDatabase();
      await other.close();
    }
  });
});
