import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../src/platform/ids";
import { setLogLevel } from "../../src/platform/log";
import type { UsageEvent, UsageEventStore } from "../../src/usage/port";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless } from "../support/skip";
import { usageStoreKinds } from "../support/usage-stores";
import { collect, event } from "./util";

/**
 * One contract for both usage store adapters. The embedded adapter always runs; the MongoDB
 * adapter runs against MONGODB_URL or the run's FerretDB (tests/support/mongo.ts).
 */
function usageStoreContract(
  name: string,
  open: () => Promise<{ store: UsageEventStore; drop(): Promise<void> }>,
  /** the reason it cannot run here; none: it runs */
  skip?: string,
) {
  describeUnless(skip)(`usage store contract: ${name}`, () => {
    let store: UsageEventStore;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      setLogLevel("error");
      ({ store, drop } = await open());
    });
    afterAll(async () => {
      await store?.close();
      await drop?.();
      setLogLevel("info");
    });

    const at = (day: string, over: Partial<UsageEvent> = {}) =>
      event({ ts: `${day}T12:00:00.000Z`, ...over });

    test("append stores each event once: a replayed batch is ignored and not counted twice", async () => {
      const accountId = newId();
      const batch = [
        at("2025-05-01", { accountId, status: 200 }),
        at("2025-05-01", { accountId, status: 200 }),
        at("2025-05-01", { accountId, status: 404 }),
      ];
      expect(await store.append(batch)).toBe(3);
      expect(await store.append(batch)).toBe(0);
      const again = batch[0] as UsageEvent;
      expect(await store.append([again, again, at("2025-05-01", { accountId })])).toBe(1);
      expect(await store.daily(accountId, "2025-05-01", "2025-05-01")).toEqual([
        { accountId, day: "2025-05-01", bucket: "svg", requests: 4, errors: 1, rateLimited: 0 },
      ]);
    });

    test("a batch first written as fresh is still recognised when retried or replayed", async () => {
      const accountId = newId();
      const batch = [
        at("2025-05-02", { accountId, status: 200 }),
        at("2025-05-02", { accountId, status: 200 }),
      ];
      expect(await store.append(batch, { fresh: true })).toBe(2);
      // a retry of the same batch (e.g. the first write's answer was lost) and a spill replay
      expect(await store.append(batch)).toBe(0);
      expect(await store.append([...batch, at("2025-05-02", { accountId })])).toBe(1);
      // fresh appends after a checked one keep the loaded ids current
      const later = at("2025-05-02", { accountId });
      expect(await store.append([later], { fresh: true })).toBe(1);
      expect(await store.append([later])).toBe(0);
      expect((await store.daily(accountId, "2025-05-02", "2025-05-02"))[0]?.requests).toBe(4);
    });

    test("daily: per day and bucket; errors are 4xx/5xx except 429, which counts apart", async () => {
      const accountId = newId();
      await store.append([
        at("2025-05-01", { accountId, bucket: "svg", status: 200 }),
        at("2025-05-01", { accountId, bucket: "svg", status: 429 }),
        at("2025-05-01", { accountId, bucket: "svg", status: 500 }),
        at("2025-05-01", { accountId, bucket: "search", status: 200 }),
        at("2025-05-02", { accountId, bucket: "catalog", status: 404 }),
        at("2025-05-03", { accountId, bucket: "batch", status: 422 }),
        at("2025-05-04", { accountId, bucket: "svg", status: 200 }),
      ]);
      const rows = await store.daily(accountId, "2025-05-01", "2025-05-03");
      const key = (r: { day: string; bucket: string }) => `${r.day}/${r.bucket}`;
      expect([...rows].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([
        { accountId, day: "2025-05-01", bucket: "search", requests: 1, errors: 0, rateLimited: 0 },
        { accountId, day: "2025-05-01", bucket: "svg", requests: 3, errors: 1, rateLimited: 1 },
        { accountId, day: "2025-05-02", bucket: "catalog", requests: 1, errors: 1, rateLimited: 0 },
        { accountId, day: "2025-05-03", bucket: "batch", requests: 1, errors: 1, rateLimited: 0 },
      ]);
    });

    test("daily answers only for the account asked about", async () => {
      const a = newId();
      const b = newId();
      await store.append([at("2025-06-01", { accountId: a }), at("2025-06-01", { accountId: b })]);
      const rows = await store.daily(a, "2025-06-01", "2025-06-01");
      expect(rows.map((r) => r.accountId)).toEqual([a]);
      expect(await store.daily(newId(), "2025-01-01", "2025-12-31")).toEqual([]);
    });

    test("eventsOfDay lists that day's events, each once, as stored", async () => {
      const accountId = newId();
      const events = [
        at("2025-07-09", { accountId, slug: "github", variant: "mono", latencyMs: 2.25 }),
        at("2025-07-09", { accountId, keyId: "key-2", bucket: "png" }),
        at("2025-07-10", { accountId }),
      ];
      await store.append(events);
      await store.append(events.slice(0, 1));
      const day = (await collect(store.eventsOfDay("2025-07-09"))).filter(
        (e) => e.accountId === accountId,
      );
      expect(day.sort((x, y) => x.id.localeCompare(y.id))).toEqual(events.slice(0, 2));
    });

    test("rebuildDaily recomputes the same projection from the log", async () => {
      const accountId = newId();
      await store.append([
        at("2025-08-01", { accountId, status: 200 }),
        at("2025-08-01", { accountId, status: 429 }),
        at("2025-08-02", { accountId, bucket: "domain", status: 404 }),
      ]);
      const before = await store.daily(accountId, "2025-08-01", "2025-08-31");
      const r = await store.rebuildDaily();
      expect(r.events).toBeGreaterThanOrEqual(3);
      expect(r.rows).toBeGreaterThanOrEqual(2);
      expect(await store.daily(accountId, "2025-08-01", "2025-08-31")).toEqual(before);
      expect(before).toHaveLength(2);
    });
  });
}

const mongo = await mongoUrl();
for (const kind of await usageStoreKinds()) usageStoreContract(kind.name, kind.open, kind.skip);

describeUnless(mongo.reason)(
  `two instances folding into usage_daily at once ${skipNote(mongo)}`.trim(),
  () => {
    test("appends on both at the same moment lose no count; the old unique index is dropped", async () => {
      const { MongoClient } = await import("mongodb");
      const { MongoUsageStore } = await import("../../src/store/mongo/usage");
      const name = testDbName("bapi_usage_race");
      const clients = [new MongoClient(mongo.url as string), new MongoClient(mongo.url as string)];
      const stores = clients.map((c) => new MongoUsageStore(c.db(name)));
      try {
        const db = clients[0]?.db(name) as import("mongodb").Db;
        // a database made by an earlier version: one row per account, day and bucket
        await db
          .collection("usage_daily")
          .createIndex(
            { accountId: 1, day: 1, bucket: 1 },
            { unique: true, name: "account_day_bucket" },
          );
        await MongoUsageStore.ensureIndexes(db);
        const indexes = (await db.collection("usage_daily").indexes()).map((i) => i.name);
        expect(indexes).not.toContain("account_day_bucket");
        const accounts = Array.from({ length: 12 }, () => newId());
        // each account's first events reach both instances' writers together
        for (const accountId of accounts)
          for (let round = 0; round < 3; round++)
            await Promise.all(
              stores.map((s) =>
                s.append([
                  event({ accountId, ts: "2025-09-01T12:00:00.000Z", status: 200 }),
                  event({ accountId, ts: "2025-09-01T12:00:00.000Z", status: 429 }),
                ]),
              ),
            );
        for (const accountId of accounts)
          expect(await stores[0]?.daily(accountId, "2025-09-01", "2025-09-01")).toEqual([
            {
              accountId,
              day: "2025-09-01",
              bucket: "svg",
              requests: 12,
              errors: 0,
              rateLimited: 6,
            },
          ]);
      } finally {
        await clients[0]?.db(name).dropDatabase();
        await Promise.all(clients.map((c) => c.close()));
      }
    }, 90_000); // 72 appends, each upserting ~20 cell documents: FerretDB runs them one by one
  },
);
