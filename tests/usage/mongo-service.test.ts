import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { eventsOf } from "../../src/usage/log/batch";
import { readSpill, spillFiles } from "../../src/usage/log/spill";
import { tempDir } from "../support/app";
import { eventsInLog, mongoUrl, skipNote, testDbName, uncountedBatches } from "../support/mongo";
import { type MongoProxy, startMongoProxy } from "../support/mongo-proxy";
import { adminKey, type ServiceProcess, startService } from "../support/service";
import { describeUnless } from "../support/skip";
import { until } from "./util";

/**
 * The service on the MongoDB store as a real process (`bun src/main.ts`), killed with SIGKILL,
 * in front of a server that refuses its usage writes (a full disk) through a loopback proxy
 * (tests/support/mongo-proxy.ts). With USAGE_DURABILITY=strict every request answered has its
 * event in the log or in a spill file, so after the restart the log, the analytics and the
 * quota counters all count exactly the requests answered.
 */
const mongo = await mongoUrl();
const dbName = testDbName("bapi_usage_svc");
/** a flush window far beyond the test: strict writes each group at once, batched nothing */
const STRICT = {
  USAGE_DURABILITY: "strict",
  USAGE_FLUSH_MS: "60000",
  USAGE_FLUSH_EVENTS: "100000",
};

describeUnless(mongo.reason)(
  `usage on the MongoDB store, killed and refused ${skipNote(mongo)}`.trim(),
  () => {
    let proxy: MongoProxy;
    let client: MongoClient;
    const running: ServiceProcess[] = [];

    beforeAll(async () => {
      proxy = await startMongoProxy(mongo.url as string);
      client = new MongoClient(mongo.url as string);
    });
    afterAll(async () => {
      for (const s of running) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
      await Promise.all(running.map((s) => s.proc.exited));
      await client?.db(dbName).dropDatabase();
      await client?.close();
      await proxy?.stop();
    });

    async function start(dataDir: string, env: Record<string, string> = {}) {
      const svc = await startService({
        dataDir,
        env: {
          MONGODB_URL: proxy.url,
          MONGODB_DB: dbName,
          JWT_SECRET: "usage-mongo-service-secret-0123456789",
          ...env,
        },
      });
      running.push(svc);
      return svc;
    }

    async function kill9(svc: ServiceProcess) {
      svc.proc.kill("SIGKILL");
      await svc.proc.exited;
    }

    /** Metered requests, 8 at a time (200s and 404s): the statuses the client was answered with. */
    async function traffic(base: string, apiKey: string, n: number): Promise<number[]> {
      const slugs = ["github", "gitlab", "npm", "no-such-brand-xyz"];
      const statuses: number[] = [];
      for (let i = 0; i < n; i += 8)
        statuses.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(8, n - i) }, async (_, j) => {
              const r = await fetch(`${base}/v1/catalog/${slugs[(i + j) % slugs.length]}`, {
                headers: { "x-api-key": apiKey },
              });
              await r.arrayBuffer();
              return r.status;
            }),
          )),
        );
      return statuses;
    }

    const inLog = (accountId: string) => eventsInLog(client.db(dbName), accountId);

    /** batches stored and not counted yet (not a pending document of a batch never stored) */
    const pending = () => uncountedBatches(client.db(dbName));

    /** today's analytics totals and /v1/usage's catalog count, as the service answers them */
    async function answers(base: string, apiKey: string) {
      const day = new Date().toISOString().slice(0, 10);
      const headers = { "x-api-key": apiKey };
      const a = await fetch(`${base}/v1/analytics/usage?from=${day}&to=${day}&granularity=day`, {
        headers,
      });
      expect(a.status).toBe(200);
      const { totals } = (await a.json()) as { totals: { requests: number; errors: number } };
      const u = await fetch(`${base}/v1/usage`, { headers });
      const usage = (await u.json()) as { endpoints: Record<string, { used: number }> };
      return {
        requests: totals.requests,
        errors: totals.errors,
        used: usage.endpoints.catalog?.used,
      };
    }

    test("strict: kill -9 right after N answered requests; the log holds N and, after the restart, the analytics count N", async () => {
      const dataDir = tempDir("usage-mongo-svc-");
      const svc = await start(dataDir, STRICT);
      const { accountId, apiKey } = await adminKey(svc.base, "pro");
      const statuses = await traffic(svc.base, apiKey, 96);
      const used = (await answers(svc.base, apiKey)).used;
      await kill9(svc);
      expect(await inLog(accountId)).toBe(statuses.length);

      const again = await start(dataDir, STRICT);
      // the batches A left pending are counted by the next holder of the projector's lease
      const expected = {
        requests: statuses.length,
        errors: statuses.filter((s) => s >= 400).length,
        used,
      };
      // (the analytics route allows 60 calls a minute: the store is watched, then it is asked)
      await until(async () => (await pending()) === 0, 60_000, "every batch counted", 100);
      expect(await answers(again.base, apiKey)).toEqual(expected);
      await kill9(again);
    }, 120_000);

    test("strict, the server's disk full: every request answered from a spill file; kill -9; once it writes again the restart replays them, each counted once", async () => {
      const dataDir = tempDir("usage-mongo-full-");
      const svc = await start(dataDir, STRICT);
      const { accountId, apiKey } = await adminKey(svc.base, "pro");
      const refusedBefore = proxy.refused;
      proxy.refuseWrites(/^usage_/);
      let statuses: number[];
      let used: number | undefined;
      try {
        statuses = await traffic(svc.base, apiKey, 64);
        used = (await answers(svc.base, apiKey)).used;
        await kill9(svc);
      } finally {
        proxy.refuseWrites(null);
      }
      expect(proxy.refused).toBeGreaterThan(refusedBefore);
      expect(statuses.filter((s) => s !== 200 && s !== 404)).toEqual([]);
      expect(await inLog(accountId)).toBe(0);
      // each answered request's event is in a spill file
      const spill = join(dataDir, "spill");
      const spilled = spillFiles(spill)
        .flatMap((f) => readSpill(join(spill, f)).flatMap((b) => eventsOf(b)))
        .filter((e) => e.accountId === accountId);
      expect(new Set(spilled.map((e) => e.id)).size).toBe(statuses.length);

      const again = await start(dataDir, STRICT);
      // counted at once from the spill files, before their replay
      expect((await answers(again.base, apiKey)).used).toBe(used);
      const expected = {
        requests: statuses.length,
        errors: statuses.filter((s) => s >= 400).length,
        used,
      };
      await until(
        async () =>
          spillFiles(spill).length === 0 &&
          (await inLog(accountId)) === statuses.length &&
          (await pending()) === 0,
        60_000,
        "the spill files replayed and counted",
        100,
      );
      expect(await inLog(accountId)).toBe(statuses.length);
      expect(await answers(again.base, apiKey)).toEqual(expected);
      await kill9(again);
    }, 120_000);
  },
);
