import { afterAll, beforeAll, expect, test } from "bun:test";
import { BSON, type Db, MongoClient, ObjectId } from "mongodb";
import type { Principal } from "../../../src/accounts/model";
import { newId } from "../../../src/platform/ids";
import { captureLogs, setLogLevel } from "../../../src/platform/log";
import { isFerretDb } from "../../../src/store/mongo/ferret";
import type { MongoUsageStore } from "../../../src/store/mongo/usage";
import {
  applyMarked,
  type BatchDoc,
  deltasOf,
  docOf,
  type EventDoc,
  MARKERS,
  markedOps,
} from "../../../src/store/mongo/usage-rollups";
import type { PeriodRow } from "../../../src/usage/analytics/cells";
import { usageSeries } from "../../../src/usage/analytics/series";
import type { UsageEvent } from "../../../src/usage/port";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { startMongoProxy } from "../../support/mongo-proxy";
import { describeUnless } from "../../support/skip";
import { event, until } from "../../usage/util";

/**
 * The MongoDB usage store's own properties: one document per event and per rollup cell, each
 * batch counted exactly once whatever fails (a process that dies after storing its events, a
 * reply lost after a write committed, a retry, two processes applying one batch), rollup
 * documents of bounded size, and the export streamed in chunks.
 */
const mongo = await mongoUrl();

describeUnless(mongo.reason)(`MongoDB usage store ${skipNote(mongo)}`.trim(), () => {
  let client: MongoClient;
  let db: Db;
  let Store: typeof MongoUsageStore;
  const opened: MongoUsageStore[] = [];
  /** a store without background recovery passes unless asked */
  const open = (recoverEveryMs = 0, on = db) => {
    const s = new Store(on, { recoverEveryMs });
    opened.push(s);
    return s;
  };
  beforeAll(async () => {
    setLogLevel("error");
    Store = (await import("../../../src/store/mongo/usage")).MongoUsageStore;
    client = new MongoClient(mongo.url as string);
    db = client.db(testDbName("bapi_usage_mongo"));
    await Store.ensureIndexes(db, { retentionDays: 30 });
  });
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await db?.dropDatabase();
    await client?.close();
    setLogLevel("info");
  });

  const at = (ts: string, over: Partial<UsageEvent> = {}) => event({ ts, ...over });
  const total = (rows: PeriodRow[]) =>
    rows.reduce((sum, r) => sum + [...r.cells.values()].reduce((m, c) => m + c.n, 0), 0);
  /** what the projections say about an account's day: daily requests, view totals, misses */
  const counts = async (s: MongoUsageStore, accountId: string, day: string) => ({
    daily: (await s.daily(accountId, day, day)).reduce((n, r) => n + r.requests, 0),
    views: await Promise.all(
      (["day.bs", "day.all", "hour.k", "hour.vf"] as const).map(async (v) =>
        total(await s.cells(accountId, v, day, v.startsWith("hour") ? `${day}T23` : day)),
      ),
    ),
    misses: Object.fromEntries(await s.misses(accountId, day, day)),
  });
  const batchOf = (accountId: string, day: string, n: number) =>
    Array.from({ length: n }, (_, i) =>
      at(`${day}T1${i % 3}:00:00.000Z`, {
        accountId,
        slug: `brand-${i % 4}`,
        status: i % 5 === 0 ? 404 : 200,
        miss: i % 4 === 0 ? [`slug:gone-${i % 8}`] : undefined,
      }),
    );
  /** A batch id made a minute ago (its time, then a new id's unique rest). */
  const minuteOld = () =>
    new ObjectId(
      ObjectId.createFromTime(Math.floor(Date.now() / 1000) - 60)
        .toHexString()
        .slice(0, 8) + new ObjectId().toHexString().slice(8),
    );
  /** Store events as a process that died right after inserting them leaves them. */
  const crashedBatch = async (events: UsageEvent[], b = minuteOld()) => {
    await db.collection<BatchDoc>("usage_batches").insertOne({ _id: b });
    await db.collection<EventDoc>("usage_events").insertMany(events.map((e) => docOf(e, b)));
    return b;
  };
  const pending = async (b: ObjectId) =>
    (await db.collection<BatchDoc>("usage_batches").countDocuments({ _id: b })) > 0;
  const expected = (events: UsageEvent[]) => {
    const misses: Record<string, number> = {};
    for (const e of events) for (const m of e.miss ?? []) misses[m] = (misses[m] ?? 0) + 1;
    const n = events.length;
    return { daily: n, views: [n, n, n, n], misses };
  };

  test("one document per event (ts a Date, its batch) and one per rollup cell", async () => {
    const accountId = newId();
    const s = open();
    const events = [
      at("2025-10-01T10:00:00.000Z", { accountId, slug: "github" }),
      at("2025-10-01T10:30:00.000Z", { accountId, slug: "github", status: 404 }),
    ];
    expect(await s.append(events)).toBe(2);
    const docs = await db
      .collection<EventDoc>("usage_events")
      .find({ accountId })
      .sort({ _id: 1 })
      .toArray();
    expect(docs.map((d) => d._id)).toEqual(events.map((e) => e.id));
    expect(docs[0]?.ts).toBeInstanceOf(Date);
    expect(docs[0]?.b).toBeInstanceOf(ObjectId);
    expect(docs.every((d) => d.b.equals(docs[0]?.b as ObjectId))).toBe(true);
    // counted: no longer pending
    expect(await db.collection("usage_batches").countDocuments({ _id: docs[0]?.b })).toBe(0);
    const bs = await db
      .collection<{ _id: string; n: number; e?: number; h: Record<string, number> }>(
        "usage_rollups",
      )
      .find({ a: accountId, v: "day.bs" })
      .toArray();
    expect(bs.map((d) => [d._id, d.n, d.e ?? 0]).sort()).toEqual([
      [`${accountId}|day.bs|2025-10-01|svg|200`, 1, 0],
      [`${accountId}|day.bs|2025-10-01|svg|404`, 1, 1],
    ]);
    expect(
      await db.collection("usage_daily").findOne({ _id: `${accountId}|2025-10-01|svg` as never }),
    ).toMatchObject({ a: accountId, day: "2025-10-01", requests: 2, errors: 1 });
    // the events' ts index is a TTL index on MongoDB (FerretDB v1 has none)
    const ts = (await db.collection("usage_events").indexes()).find((i) => i.name === "ts");
    const ferret = await isFerretDb(db);
    expect(ts?.expireAfterSeconds).toBe(ferret ? undefined : 31 * 86_400);
  });

  test("a process that died after storing its events: the next start counts them once", async () => {
    const accountId = newId();
    const day = "2025-10-02";
    const events = batchOf(accountId, day, 12);
    // what `append` leaves when its process dies right after the insert: a pending batch made a
    // minute ago, its events stored and not counted
    const b = await crashedBatch(events);
    const none = await counts(open(), accountId, day);
    expect(none).toEqual({ daily: 0, views: [0, 0, 0, 0], misses: {} });
    // a new process's first recovery pass, at start
    const s = open(5_000);
    await until(async () => !(await pending(b)), 10_000, "recovery");
    expect(await counts(s, accountId, day)).toEqual(expected(events));
    expect(await pending(b)).toBe(false);
    // passes after that change nothing
    expect(await s.recover(0)).toBe(0);
    expect(await counts(s, accountId, day)).toEqual(expected(events));
    await s.close();
  });

  test("a process that died between rollup documents: recovery counts the rest, none twice", async () => {
    const accountId = newId();
    const day = "2025-10-03";
    const events = batchOf(accountId, day, 9);
    const b = await crashedBatch(events);
    // the batch reached every rollup document, then the process died (daily and misses not
    // written, the batch still pending)
    await applyMarked(
      db.collection<{ _id: string }>("usage_rollups"),
      markedOps(deltasOf(events).rollups, b),
    );
    const s = open();
    const partial = await counts(s, accountId, day);
    expect(partial.daily).toBe(0);
    expect(partial.views).toEqual([9, 9, 9, 9]);
    expect(await s.recover()).toBe(9);
    expect(await counts(s, accountId, day)).toEqual(expected(events));
    expect(await pending(b)).toBe(false);
  });

  test("a write whose reply is lost after it committed: the retried batch counts once", async () => {
    const proxy = await startMongoProxy(mongo.url as string);
    const viaProxy = new MongoClient(proxy.url, { retryWrites: false });
    try {
      const s = open(0, viaProxy.db(db.databaseName));
      for (const [command, collection] of [
        ["insert", "usage_events"],
        ["update", "usage_rollups"],
        ["delete", "usage_batches"],
      ] as const) {
        const accountId = newId();
        const day = "2025-10-04";
        const events = batchOf(accountId, day, 6);
        proxy.dropReplyTo(command, collection);
        const before = proxy.dropped;
        await expect(s.append(events)).rejects.toThrow();
        expect(proxy.dropped).toBe(before + 1);
        // the writer retries the same events
        await s.append(events);
        expect(await counts(s, accountId, day)).toEqual(expected(events));
        expect(await db.collection("usage_batches").countDocuments({})).toBe(0);
      }
    } finally {
      await viaProxy.close();
      await proxy.stop();
    }
  }, 60_000);

  test("one batch applied by two processes at once, and retried, counts once", async () => {
    const accountId = newId();
    const day = "2025-10-05";
    const events = batchOf(accountId, day, 8);
    const [a, b] = [open(), open()];
    const stored = await Promise.all([a.append(events), b.append(events)]);
    expect(stored.reduce((x, y) => x + y, 0)).toBe(8);
    expect(await a.append(events)).toBe(0);
    expect(await a.recover(0)).toBe(0);
    expect(await counts(b, accountId, day)).toEqual(expected(events));
  });

  test("prune counts the pending batches first: no event it removes goes uncounted", async () => {
    const accountId = newId();
    const events = batchOf(accountId, "2020-01-02", 5);
    await crashedBatch(events, new ObjectId());
    const s = open();
    const r = await s.prune("2020-01-03");
    expect(r.events).toBeGreaterThanOrEqual(5);
    expect(await db.collection("usage_events").countDocuments({ accountId })).toBe(0);
    expect(await counts(s, accountId, "2020-01-02")).toEqual(expected(events));
  });

  test("rollups of the older layout are migrated once: the all keys reordered, the log rebuilt", async () => {
    const mdb = client.db(testDbName("bapi_usage_mig"));
    try {
      await Store.ensureIndexes(mdb);
      const s = open(0, mdb);
      const accountId = newId();
      await s.append([
        ...batchOf(accountId, "2021-04-01", 6),
        ...batchOf(accountId, "2021-04-02", 7),
      ]);
      await s.prune("2021-04-02");
      const principal = { accountId, tier: "pro", keyId: "k" } as Principal;
      const now = new Date("2021-04-03T00:00:00Z");
      const q = { from: "2021-04-01", to: "2021-04-02", group_by: "brand,key" };
      const before = await usageSeries(s, principal, q, now);
      expect(before.totals.requests).toBe(13);
      // the older layout: `all` keys bucket|key|brand|..., no usage_brands, no version
      const rollups = mdb.collection<{ _id: string; v: string; a: string; p: string }>(
        "usage_rollups",
      );
      for (const d of await rollups.find({ v: { $in: ["day.all", "hour.all"] } }).toArray()) {
        const prefix = `${d.a}|${d.v}|${d.p}|`;
        const [brand, bucket, key, ...rest] = d._id.slice(prefix.length).split("|");
        await rollups.insertOne({ ...d, _id: prefix + [bucket, key, brand, ...rest].join("|") });
        await rollups.deleteOne({ _id: d._id });
      }
      // a run interrupted after copying one pruned day's document: the copy is not counted twice
      const old = await rollups.findOne({ v: "day.all", p: "2021-04-01" });
      if (!old) throw new Error("no day.all document of the pruned day");
      const prefix = `${old.a}|${old.v}|${old.p}|`;
      const [bucket, key, brand, ...rest] = old._id.slice(prefix.length).split("|");
      await rollups.insertOne({ ...old, _id: prefix + [brand, bucket, key, ...rest].join("|") });
      await mdb.collection("usage_brands").deleteMany({});
      await mdb.collection("usage_meta").deleteMany({});
      await rollups.insertOne({
        _id: `${accountId}|day.b|2021-04-02|zzz|200`,
        a: accountId,
        v: "day.b",
        p: "2021-04-02",
        n: 7,
      } as never);
      const logs = captureLogs();
      try {
        await s.migrateCells();
        await s.migrateCells();
      } finally {
        logs.restore();
      }
      expect(logs.lines.map((l) => l.msg)).toEqual([
        "usage analytics cells migrated to bounded brands",
      ]);
      expect(await usageSeries(s, principal, q, now)).toEqual(before);
      const brands = await usageSeries(s, principal, { ...q, group_by: "brand" }, now);
      expect(brands.groups.map((g) => g.brand)).not.toContain("zzz");
      expect(await mdb.collection("usage_brands").countDocuments({ p: "2021-04-02" })).toBe(1);
    } finally {
      await mdb.dropDatabase();
    }
  }, 60_000);

  test("rebuild: days still in the log are recounted from it, documents of pruned days kept", async () => {
    const accountId = newId();
    const s = open();
    const old = batchOf(accountId, "2021-03-01", 6);
    const kept = batchOf(accountId, "2021-03-02", 7);
    await s.append([...old, ...kept]);
    const before = [
      await counts(s, accountId, "2021-03-01"),
      await counts(s, accountId, "2021-03-02"),
    ];
    expect(before).toEqual([expected(old), expected(kept)]);
    await s.prune("2021-03-02");
    // a count the log does not back (as if a batch had been counted twice) is repaired
    await db
      .collection<{ _id: string }>("usage_daily")
      .updateOne({ _id: `${accountId}|2021-03-02|svg` }, { $inc: { requests: 5 } });
    const r = await s.rebuildDaily();
    expect(r.events).toBeGreaterThanOrEqual(7);
    expect([
      await counts(s, accountId, "2021-03-01"),
      await counts(s, accountId, "2021-03-02"),
    ]).toEqual(before);
  }, 60_000);

  test("the biggest rollup document stays under 64 KB after many batches", async () => {
    const accountId = newId();
    const s = open();
    const batches = MARKERS + 16;
    for (let i = 0; i < batches; i++)
      await s.append([
        at(`2025-10-06T10:00:${String(i % 60).padStart(2, "0")}.000Z`, {
          accountId,
          slug: "github",
          latencyMs: 0.05 * 1.2 ** (i % 80),
        }),
      ]);
    const docs = await db
      .collection<{ m: ObjectId[] }>("usage_rollups")
      .find({ a: accountId })
      .toArray();
    const sizes = docs.map((d) => BSON.calculateObjectSize(d));
    expect(Math.max(...sizes)).toBeLessThan(64 * 1024);
    expect(Math.max(...docs.map((d) => d.m.length))).toBe(MARKERS);
    expect(total(await s.cells(accountId, "day.all", "2025-10-06", "2025-10-06"))).toBe(batches);
  }, 120_000);

  test("a batch that updates hundreds of existing rollup documents completes and counts once", async () => {
    const accountId = newId();
    const s = open();
    const day = "2025-10-07";
    // 120 brands x 2 statuses: hundreds of cells per view, each one updated by the second batch
    const wide = () =>
      Array.from({ length: 240 }, (_, i) =>
        at(`${day}T0${i % 4}:00:00.000Z`, {
          accountId,
          slug: `wide-${i % 120}`,
          status: i % 2 ? 200 : 404,
        }),
      );
    await s.append(wide());
    await s.append(wide());
    const rollups = await db.collection("usage_rollups").countDocuments({ a: accountId });
    expect(rollups).toBeGreaterThan(200);
    expect(await counts(s, accountId, day)).toMatchObject({
      daily: 480,
      views: [480, 480, 480, 480],
    });
  }, 120_000);

  test("the projection lease: a projection that outlives the lease's term keeps it (renewed); the next waits for it", async () => {
    // FerretDB's writers take the lease; on MongoDB the store skips it, so the test takes the
    // FerretDB path on either server
    const leaseMs = 300;
    const s1 = new Store(db, { recoverEveryMs: 0, leaseMs });
    const s2 = new Store(db, { recoverEveryMs: 0, leaseMs });
    opened.push(s1, s2);
    type Serialized = {
      ferret: Promise<boolean>;
      serialized<T>(fn: () => Promise<T>): Promise<T>;
    };
    for (const s of [s1, s2]) (s as unknown as Serialized).ferret = Promise.resolve(true);
    const locks = db.collection<{ _id: string; until: number }>("usage_locks");
    const order: string[] = [];
    let finish!: () => void;
    const slow = (s1 as unknown as Serialized).serialized(async () => {
      order.push("first starts");
      await new Promise<void>((r) => {
        finish = r;
      });
      order.push("first ends");
    });
    await until(() => order.length > 0, 5000, "the first projection holds the lease");
    const first = (await locks.findOne({ _id: "projection" }))?.until as number;
    const next = (s2 as unknown as Serialized).serialized(async () => {
      order.push("second starts");
    });
    // held past its first term: the lease would have run out unless its holder renewed it
    await until(
      async () => ((await locks.findOne({ _id: "projection" }))?.until ?? 0) > first + leaseMs,
      10_000,
      "the lease renewed past its first term",
      20,
    );
    expect(Date.now()).toBeGreaterThan(first);
    expect(order).toEqual(["first starts"]);
    finish();
    await Promise.all([slow, next]);
    expect(order).toEqual(["first starts", "first ends", "second starts"]);
    expect(await locks.findOne({ _id: "projection" })).toBeNull();
  }, 60_000);

  test("export stream: size and last id first, then chunks of at most 1,000 events", async () => {
    const accountId = newId();
    const events = Array.from({ length: 2_500 }, (_, i) =>
      at(`2025-10-07T10:00:00.${String(i % 1000).padStart(3, "0")}Z`, {
        accountId,
        id: newId(Date.parse("2025-10-07T10:00:00.000Z") + i),
        slug: "github",
      }),
    );
    const s = open();
    await s.append(events);
    const q = { from: "2025-10-01", to: "2025-10-31", before: "2025-11-01T00:00:00.000Z" };
    const page = await s.exportStream(accountId, { ...q, after: null, limit: 2_000 });
    expect([page.events, page.last]).toEqual([2_000, events[1_999]?.id as string]);
    const lines: string[] = [];
    let chunks = 0;
    for (let c = await page.next(); c; c = await page.next()) {
      chunks++;
      const text = new TextDecoder().decode(c);
      expect(text.endsWith("\n")).toBe(true);
      lines.push(...text.split("\n").filter(Boolean));
    }
    expect(chunks).toBe(2);
    expect(lines.map((l) => (JSON.parse(l) as UsageEvent).id)).toEqual(
      events.slice(0, 2_000).map((e) => e.id),
    );
    expect(JSON.parse(lines[0] as string)).toEqual(events[0] as UsageEvent);
    const rest = await s.exportStream(accountId, { ...q, after: page.last, limit: 2_000 });
    expect([rest.events, rest.last]).toEqual([500, events[2_499]?.id as string]);
    rest.close();
  }, 60_000);
});
