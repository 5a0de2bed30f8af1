import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { Binary, type Db, MongoClient } from "mongodb";
import { newId } from "../../../src/platform/ids";
import { setLogLevel } from "../../../src/platform/log";
import type { Batch } from "../../../src/usage/log/batch";
import type { MongoUsageLog } from "../../../src/usage/log/mongo";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { startMongoProxy } from "../../support/mongo-proxy";
import { describeUnless } from "../../support/skip";
import { batchesOf, type Input, until } from "../util";

/**
 * The MongoDB log's own properties: a document per batch, period documents counted by one
 * projector at a time, and every batch counted exactly once whatever fails: a reply lost after
 * any write of an append or of a projection (the retry, or the next holder of the lease, finds
 * what was done), a projector that dies with its group half written (the next holder counts the
 * rest, none twice), a batch delivered twice.
 */
const mongo = await mongoUrl();
const NOW = Date.parse("2025-10-02T12:00:00Z");

describeUnless(mongo.reason)(`MongoDB usage log ${skipNote(mongo)}`.trim(), () => {
  let client: MongoClient;
  let db: Db;
  let Log: typeof MongoUsageLog;
  const opened: MongoUsageLog[] = [];
  const open = (on = db, opts: ConstructorParameters<typeof MongoUsageLog>[1] = {}) => {
    const s = new Log(on, { projectEveryMs: 50, now: () => NOW, ...opts });
    opened.push(s);
    return s;
  };
  const dbs: Db[] = [];
  beforeAll(async () => {
    setLogLevel("error");
    Log = (await import("../../../src/usage/log/mongo")).MongoUsageLog;
    client = new MongoClient(mongo.url as string);
  });
  /** each test on a database of its own: one projector lease per test */
  beforeEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close().catch(() => {})));
    db = client.db(testDbName("bapi_usage_log_mongo"));
    dbs.push(db);
    await Log.ensureIndexes(db, { retentionDays: 30 });
  });
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close().catch(() => {})));
    for (const d of dbs) await d.dropDatabase();
    await client?.close();
    setLogLevel("info");
  });

  const at = (ts: string, over: Partial<Input> = {}): Partial<Input> => ({
    at: Date.parse(ts),
    ...over,
  });
  /** what the projections say about an account's day */
  const counts = async (s: MongoUsageLog, accountId: string, day: string) => {
    const sum = async (g: "day" | "hour", r: "bs" | "all" | "k" | "vf") =>
      (
        await s.cells(
          accountId,
          g,
          r,
          g === "day" ? day : `${day}T00`,
          g === "day" ? day : `${day}T23`,
        )
      )
        .flatMap((x) => x.cells)
        .reduce((n, c) => n + c.n, 0);
    return {
      daily: (await s.daily(accountId, day, day)).reduce((n, r) => n + r.requests, 0),
      views: [
        await sum("day", "bs"),
        await sum("day", "all"),
        await sum("hour", "k"),
        await sum("hour", "vf"),
      ],
      misses: Object.fromEntries(await s.misses(accountId, day, day)),
    };
  };
  const batchOf = (accountId: string, day: string, n: number) =>
    batchesOf(
      Array.from({ length: n }, (_, i) =>
        at(`${day}T1${i % 3}:00:0${i % 10}.000Z`, {
          accountId,
          slug: `brand-${i % 4}`,
          status: i % 5 === 0 ? 404 : 200,
          miss: i % 4 === 0 ? [`slug:gone-${i % 8}`] : undefined,
        }),
      ),
    );
  const expected = (batches: Batch[]) => {
    const misses: Record<string, number> = {};
    let n = 0;
    for (const b of batches) {
      n += b.n;
      for (const m of b.miss ?? [])
        for (const j of m ?? [])
          misses[b.strings[j] as string] = (misses[b.strings[j] as string] ?? 0) + 1;
    }
    return { daily: n, views: [n, n, n, n], misses };
  };
  const copy = (b: Batch): Batch => ({ ...b, strings: [...b.strings] });

  test("a document per batch: columnar int arrays and a Date, pending until counted; a period document per account and day or hour, its cells as bytes", async () => {
    const accountId = newId();
    const s = open();
    const batches = batchOf(accountId, "2025-10-01", 6);
    expect(await s.append(batches)).toBe(6);
    await s.settled();
    const docs = await db.collection("usage_log").find({ a: accountId }).toArray();
    expect(docs).toHaveLength(1);
    const d = docs[0] as unknown as Record<string, unknown>;
    expect(d.t).toBeInstanceOf(Date);
    expect(d.n).toBe(6);
    expect((d.st as number[]).every((x) => Number.isInteger(x))).toBe(true);
    // its state apart from it: counted, no longer pending
    expect(await db.collection("usage_pending").countDocuments()).toBe(0);
    const counted = await db.collection<{ _id: string }>("usage_counted").find().toArray();
    expect(counted.map((x) => x._id)).toEqual([d._id as string]);
    const periods = await db
      .collection<{ _id: string; s: string[]; d: Binary }>("usage_periods")
      .find({ a: accountId })
      .toArray();
    for (const p of periods) {
      expect(p.d).toBeInstanceOf(Binary);
      expect(p.s).toContain("key-1");
    }
    expect(periods.map((p) => p._id).sort()).toEqual([
      `${accountId}|d|2025-10-01`,
      `${accountId}|h|2025-10-01T10`,
      `${accountId}|h|2025-10-01T11`,
      `${accountId}|h|2025-10-01T12`,
    ]);
    expect(await counts(s, accountId, "2025-10-01")).toEqual(expected(batches));
    // the batch time index; a TTL index where the server has them
    const t = (await db.collection("usage_log").indexes()).find((i) => i.name === "t");
    expect(t?.key).toEqual({ t: 1 });
  });

  test("a batch delivered twice, by two instances at once, is stored and counted once", async () => {
    const accountId = newId();
    const a = open();
    const b = open();
    const batches = batchOf(accountId, "2025-10-03", 12);
    const stored = await Promise.all([a.append(batches), b.append(batches.map(copy))]);
    expect(stored.reduce((x, y) => x + y, 0)).toBe(12);
    await a.settled();
    await b.settled();
    expect(await counts(a, accountId, "2025-10-03")).toEqual(expected(batches));
  });

  /** every write of an append and of its projection, in order */
  const STEPS: [string, string][] = [
    ["insert", "usage_pending"],
    ["insert", "usage_log"],
    ["update", "usage_projector"],
    ["update", "usage_periods"],
    ["update", "usage_misses"],
    ["insert", "usage_counted"],
    ["delete", "usage_pending"],
    ["delete", "usage_projector"],
  ];

  test("a reply lost after each write: the retry (or the next projection) counts the batch once", async () => {
    const proxy = await startMongoProxy(mongo.url as string);
    const viaProxy = new MongoClient(proxy.url, { retryWrites: false });
    try {
      for (const [command, collection] of STEPS) {
        const accountId = newId();
        db = client.db(testDbName("bapi_usage_log_mongo"));
        dbs.push(db);
        await Log.ensureIndexes(db);
        const s = open(viaProxy.db(db.databaseName));
        const batches = batchOf(accountId, "2025-10-04", 20);
        proxy.dropReplyTo(command, collection);
        const before = proxy.dropped;
        // the recorder retries an append that failed, with the same batches
        for (let attempt = 0; ; attempt++) {
          try {
            await s.append(batches.map(copy));
            await s.settled();
            break;
          } catch (err) {
            if (attempt > 5) throw err;
          }
        }
        await until(
          async () => (await counts(s, accountId, "2025-10-04")).daily >= 20,
          10_000,
          `${command} ${collection}`,
        );
        expect({ step: `${command} ${collection}`, dropped: proxy.dropped }).toEqual({
          step: `${command} ${collection}`,
          dropped: before + 1,
        });
        expect({
          step: `${command} ${collection}`,
          counts: await counts(s, accountId, "2025-10-04"),
        }).toEqual({
          step: `${command} ${collection}`,
          counts: expected(batches),
        });
        await s.close();
      }
    } finally {
      await viaProxy.close();
      await proxy.stop();
    }
  }, 120_000);

  test("a projector that dies at each write of its group (kill -9): the next holder of the lease counts the rest, none twice", async () => {
    for (const [command, collection] of STEPS.slice(2)) {
      db = client.db(testDbName("bapi_usage_log_mongo"));
      dbs.push(db);
      await Log.ensureIndexes(db);
      const proxy = await startMongoProxy(mongo.url as string);
      const viaProxy = new MongoClient(proxy.url, {
        retryWrites: false,
        serverSelectionTimeoutMS: 500,
      });
      // three accounts over twelve hours: 39 period documents, more than one bulk write, so a
      // group can die half written
      const accounts = [newId(), newId(), newId()];
      const dying = open(viaProxy.db(db.databaseName), { leaseMs: 600 });
      const byAccount = accounts.map((accountId) =>
        batchesOf(
          Array.from({ length: 24 }, (_, i) =>
            at(`2025-10-05T${String(i % 12).padStart(2, "0")}:00:00.000Z`, {
              accountId,
              slug: `brand-${i % 4}`,
              status: i % 5 === 0 ? 404 : 200,
              miss: i % 4 === 0 ? [`slug:gone-${i % 8}`] : undefined,
            }),
          ),
        ),
      );
      const batches = byAccount.flat();
      proxy.dropReplyTo(command, collection);
      await dying.append(batches).catch(() => 0);
      await until(() => proxy.dropped > 0, 10_000, "the write whose reply is lost");
      // it dies there: nothing of it reaches the server again, its lease runs out
      await proxy.stop();
      const next = open(db, { leaseMs: 600 });
      // the quota counters' seed counts every stored batch whatever the group reached: the
      // documents' cells plus the batches not counted into them yet (read while a live holder
      // keeps the lease, so the tally cannot count them first)
      const leases = db.collection<{ _id: string; owner: string; until: number }>(
        "usage_projector",
      );
      await leases.replaceOne(
        { _id: "lease" },
        { owner: "another instance", until: Date.now() + 60_000 },
        { upsert: true },
      );
      const tally: Record<string, number> = {};
      for await (const e of next.tallyOfDay("2025-10-05"))
        tally[e.accountId as string] = (tally[e.accountId as string] ?? 0) + (e.events ?? 1);
      await leases.deleteOne({ _id: "lease" });
      expect({ step: `${command} ${collection}`, tally }).toEqual({
        step: `${command} ${collection}`,
        tally: Object.fromEntries(accounts.map((a) => [a, 24])),
      });
      await until(
        async () => {
          await next.project().catch(() => 0);
          return (
            (await db.collection("usage_pending").countDocuments()) === 0 &&
            (await db.collection("usage_projector").countDocuments({ _id: "group" as never })) === 0
          );
        },
        15_000,
        `the next holder after ${command} ${collection}`,
      );
      for (const [k, accountId] of accounts.entries())
        expect({
          step: `${command} ${collection}`,
          counts: await counts(next, accountId, "2025-10-05"),
        }).toEqual({
          step: `${command} ${collection}`,
          counts: expected(byAccount[k] as Batch[]),
        });
      await next.close();
      // the dead one's timers stop; its client gives up on the stopped proxy
      void dying.close().catch(() => {});
      void viaProxy.close().catch(() => {});
    }
  }, 180_000);

  test("export: pages by id from the cursor's batch, stopping before an unsettled batch", async () => {
    const accountId = newId();
    const s = open();
    const t0 = Date.parse("2025-10-06T00:00:00Z");
    const batches: Batch[] = [];
    for (let m = 0; m < 10; m++)
      batches.push(
        ...batchesOf(
          Array.from({ length: 30 }, (_, i) => ({ accountId, at: t0 + m * 60_000 + i * 1000 })),
        ),
      );
    await s.append(batches);
    const page = await s.exportStream(accountId, {
      from: "2025-10-06",
      to: "2025-10-06",
      after: null,
      before: t0 + 7 * 60_000 + 5_000,
      limit: 1000,
    });
    expect(page.events).toBe(210);
    let lines: string[] = [];
    for (let c = await page.next(); c; c = await page.next())
      lines = lines.concat(new TextDecoder().decode(c).split("\n").filter(Boolean));
    expect(lines).toHaveLength(210);
    const ids = lines.map((l) => JSON.parse(l).id as string);
    expect([...ids].sort()).toEqual(ids);
    const next = await s.exportStream(accountId, {
      from: "2025-10-06",
      to: "2025-10-06",
      after: ids[99] as string,
      before: t0 + 20 * 60_000,
      limit: 50,
    });
    expect(next.events).toBe(50);
    const first = JSON.parse(
      new TextDecoder().decode((await next.next()) as Uint8Array).split("\n")[0] as string,
    );
    expect(first.id).toBe(ids[100]);
  });
});
