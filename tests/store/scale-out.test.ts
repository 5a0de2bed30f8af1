import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { ADMIN_TOKEN, freePort, SERVICE_CMD, tempDir } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { eventsInLog, mongoUrl, skipNote, testDbName, uncountedBatches } from "../support/mongo";
import { HAS_REDIS, REDIS_MISSING, type RedisHarness, startRedisHarness } from "../support/redis";
import { adminKey } from "../support/service";
import { describeUnless } from "../support/skip";

/**
 * Scale-out: two app processes (`bun src/main.ts`, each with its own DATA_DIR) on ONE MongoDB
 * database (FerretDB in tests) and ONE Upstash endpoint (scripts/upstash-local.ts over a real
 * redis-server). Loopback only; bounded load and deadlines.
 */
const ROOT = join(import.meta.dir, "../..");
const mongo = await mongoUrl();
const reason = !HAS_REDIS ? "(skipped: redis-server is not installed)" : skipNote(mongo);
const KEY_CACHE_TTL_MS = 500;
const JWT_SECRET = "scale-out-test-secret-0123456789abcdef";

interface Instance {
  base: string;
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
  dataDir: string;
}

let redis: RedisHarness;
const dbName = testDbName("bapi_scale");
const running: Instance[] = [];

async function waitReady(base: string, proc: Instance["proc"], ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${base} exited with ${proc.exitCode}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await Bun.sleep(150);
  }
  throw new Error(`${base} was not ready in ${ms} ms`);
}

async function start(port?: number, dataDir?: string): Promise<Instance> {
  const p = port ?? (await freePort());
  const dir = dataDir ?? tempDir("bapi-scale-");
  const proc = Bun.spawn(SERVICE_CMD, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(p),
      HOST: "127.0.0.1",
      DATA_DIR: dir,
      MONGODB_URL: mongo.url as string,
      MONGODB_DB: dbName,
      CATALOG_FILE: smallCatalogFile(),
      JWT_SECRET,
      ...redis.env,
      ADMIN_TOKEN,
      KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS),
      USAGE_FLUSH_MS: "100",
      LOG_REQUESTS: "off",
      LOG_LEVEL: "error",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const inst = { base: `http://127.0.0.1:${p}`, proc, port: p, dataDir: dir };
  running.push(inst);
  await waitReady(inst.base, proc);
  return inst;
}

async function stop(i: Instance): Promise<void> {
  if (i.proc.exitCode === null && i.proc.signalCode === null) i.proc.kill("SIGTERM");
  await i.proc.exited;
}

async function status(url: string, apiKey: string): Promise<number> {
  const r = await fetch(url, { headers: { "x-api-key": apiKey } });
  await r.arrayBuffer();
  return r.status;
}

async function analytics(base: string, apiKey: string) {
  const r = await fetch(`${base}/v1/analytics/usage?bucket=svg`, {
    headers: { "x-api-key": apiKey },
  });
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    totals: { svg: { requests: number; errors: number; rateLimited: number } };
  };
  return body.totals.svg;
}

async function poll<T>(
  ms: number,
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  every = 100,
): Promise<T> {
  const until = Date.now() + ms;
  let v = await get();
  while (!ok(v) && Date.now() < until) {
    await Bun.sleep(every);
    v = await get();
  }
  return v;
}

describeUnless(mongo.reason ?? (HAS_REDIS ? undefined : REDIS_MISSING))(
  `two instances on one MongoDB and one Upstash ${reason}`.trim(),
  () => {
    let a: Instance;
    let b: Instance;

    beforeAll(async () => {
      redis = await startRedisHarness();
      // one after the other: the first seeds the catalog into the shared database
      a = await start();
      b = await start();
    }, 120_000);

    afterAll(async () => {
      await Promise.all(running.map(stop));
      await redis?.stop();
      const client = new MongoClient(mongo.url as string);
      try {
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    }, 30_000);

    test("a free key's daily svg cap (50) holds across both under concurrent load, and analytics on either equals the traffic sent to both", async () => {
      const { apiKey } = await adminKey(a.base);
      const sent = 90;
      const statuses = await Promise.all(
        Array.from({ length: sent }, (_, i) =>
          status(`${(i % 2 ? a : b).base}/v1/svg/github`, apiKey),
        ),
      );
      const ok = statuses.filter((s) => s === 200).length;
      const refused = statuses.filter((s) => s === 429).length;
      expect(ok + refused).toBe(sent);
      expect(ok).toBeLessThanOrEqual(50);
      // the cap is shared, not per instance, yet every slot is used (nothing failed open or shut)
      expect(ok).toBe(50);

      const want = { requests: sent, errors: 0, rateLimited: refused };
      for (const inst of [a, b]) {
        const got = await poll(
          // the events reach the log through each instance's batching writer (and its spill
          // replay when FerretDB falls behind): allow for a loaded machine
          30_000,
          () => analytics(inst.base, apiKey),
          (v) => v.requests === sent,
          // at most ~20 calls per instance: the route allows 60 per minute per account
          1_500,
        );
        expect(got).toEqual(want);
      }
    }, 120_000);

    test("a key created on A works on B at once; revoked on A, B refuses it within KEY_CACHE_TTL_MS", async () => {
      const { apiKey, keyId } = await adminKey(a.base, "pro");
      // B never saw this key: it reads it from MongoDB on first use
      expect(await status(`${b.base}/v1/catalog/github`, apiKey)).toBe(200);
      // and now holds it in its cache
      expect(await status(`${b.base}/v1/catalog/github`, apiKey)).toBe(200);

      const r = await fetch(`${a.base}/admin/keys/${keyId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(r.status).toBe(200);
      expect(await status(`${a.base}/v1/catalog/github`, apiKey)).toBe(401);
      // B refuses it once its cache entry expires (the lifetime itself is tested on a clock the
      // test moves, tests/accounts/keys.test.ts); the poll's bound only keeps a failure short
      const last = await poll(
        KEY_CACHE_TTL_MS + 15_000,
        () => status(`${b.base}/v1/catalog/github`, apiKey),
        (s) => s === 401,
      );
      expect(last).toBe(401);
    }, 30_000);

    test("kill -9 of A under load: B answers every request; A restarted loses no acknowledged account or key", async () => {
      const loadKey = (await adminKey(b.base, "internal")).apiKey;
      const acked: { accountId: string; apiKey: string }[] = [];
      for (let i = 0; i < 3; i++) acked.push(await adminKey(a.base));

      let stopLoad = false;
      const bStatuses: number[] = [];
      const bErrors: string[] = [];
      const loadB = async () => {
        const paths = ["/v1/svg/github", "/v1/catalog/gitlab", "/v1/svg/npm"];
        let i = 0;
        while (!stopLoad) {
          try {
            bStatuses.push(await status(`${b.base}${paths[i++ % paths.length]}`, loadKey));
          } catch (err) {
            bErrors.push((err as Error).message);
          }
        }
      };
      // A keeps creating accounts under load until it is killed; each 201 is acknowledged
      const createOnA = async () => {
        while (!stopLoad) {
          try {
            const r = await fetch(`${a.base}/admin/keys`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${ADMIN_TOKEN}`,
                "content-type": "application/json",
              },
              body: JSON.stringify({ tier: "free" }),
            });
            if (r.status === 201) acked.push((await r.json()) as (typeof acked)[number]);
            else await r.arrayBuffer();
          } catch {
            await Bun.sleep(20); // A is gone: connection refused
          }
        }
      };
      const workers = [loadB(), loadB(), loadB(), loadB(), createOnA(), createOnA()];
      // under load until A acknowledged accounts made during it and B answered some (instead
      // of a fixed 700 ms), then the kill; then until B answered more after it
      await poll(10_000, async () => acked.length > 5 && bStatuses.length > 50, Boolean, 20);
      a.proc.kill("SIGKILL");
      await a.proc.exited;
      const atKill = bStatuses.length;
      await poll(10_000, async () => bStatuses.length > atKill + 50, Boolean, 20);
      stopLoad = true;
      await Promise.all(workers);

      expect(bErrors).toEqual([]);
      expect(bStatuses.length).toBeGreaterThan(atKill); // B went on answering after the kill
      expect(bStatuses.filter((s) => s !== 200)).toEqual([]);
      expect(acked.length).toBeGreaterThan(3);

      const restarted = await start(a.port, a.dataDir);
      a = restarted;
      for (const k of acked) {
        expect(await status(`${a.base}/v1/catalog/github`, k.apiKey)).toBe(200);
        const r = await fetch(`${a.base}/admin/accounts/${k.accountId}`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      }
    }, 90_000);

    test("kill -9 of A in the middle of a usage write: every event in the log is counted once", async () => {
      const { accountId, apiKey } = await adminKey(a.base, "internal");
      const client = new MongoClient(mongo.url as string);
      const db = client.db(dbName);
      // this account's batches stored and not counted yet, or a group of them under way
      const pendingBatches = () => uncountedBatches(db, accountId);
      try {
        let answered = 0;
        // until a kill lands while a batch is stored but not yet counted (at most 3 tries)
        let leftPending = 0;
        for (let attempt = 0; attempt < 3 && leftPending === 0; attempt++) {
          let stopLoad = false;
          const load = async () => {
            while (!stopLoad) {
              try {
                await status(`${a.base}/v1/svg/github`, apiKey);
                answered++;
              } catch {
                await Bun.sleep(20); // A is gone
              }
            }
          };
          const workers = Array.from({ length: 8 }, load);
          const from = answered;
          await poll(
            20_000,
            async () => answered > from + 200 && (await pendingBatches()) > 0,
            Boolean,
            5,
          );
          a.proc.kill("SIGKILL");
          await a.proc.exited;
          stopLoad = true;
          await Promise.all(workers);
          leftPending = await pendingBatches();
          a = await start(a.port, a.dataDir);
        }
        expect(leftPending).toBeGreaterThan(0);

        // the events A stored before it died (plus any its restart replays from its spill files)
        const inLog = () => eventsInLog(db, accountId);
        const seen = await poll(
          // the pending batches are counted by the next holder of the projector's lease (B, or
          // the restarted A), once a lease A held runs out (10 s); room for a slow machine
          240_000,
          async () => ({
            log: await inLog(),
            counted: (await analytics(b.base, apiKey)).requests,
            // an orphan pending document (A died between its two inserts) is not a batch
            pending: await uncountedBatches(db, accountId),
          }),
          (v) => v.log > 0 && v.counted === v.log && v.pending === 0,
          1_500,
        );
        expect(seen.log).toBeGreaterThan(0);
        expect(seen.counted).toBe(seen.log);
        expect(seen.log).toBeLessThanOrEqual(answered + 24);
        expect(seen.pending).toBe(0);
      } finally {
        await client.close();
      }
    }, 360_000);
  },
);
