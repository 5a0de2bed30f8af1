import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../../src/platform/ids";
import { setLogLevel } from "../../src/platform/log";
import { countersRebuild } from "../../src/usage/counters";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../support/app";
import { type RedisHarness, startRedisHarness, withRedis } from "../support/redis";
import { settle, until } from "./util";

/**
 * Quota counters are a projection of the usage event log: after the counter store loses its
 * data, replaying today's events gives GET /v1/usage the same answer as before.
 */

interface Account {
  accountId: string;
  apiKey: string;
}

async function account(t: TestApp, tier: string): Promise<Account> {
  const r = await t.req("/admin/keys", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as Account;
}

/** Traffic whose outcomes count differently: 200s, a 404, 429 refusals, a key regeneration. */
async function traffic(t: TestApp) {
  let metered = 0;
  const get = async (path: string, key: string) => {
    metered++;
    return (await t.get(path, key)).status;
  };
  const post = async (path: string, key: string, body: unknown) => {
    metered++;
    return (await t.post(path, key, body)).status;
  };
  const free = await account(t, "free");
  const pro = await account(t, "pro");
  const statuses: number[] = [];
  for (const slug of ["github", "gitlab", "no-such-brand-xyz"])
    statuses.push(await get(`/v1/catalog/${slug}`, free.apiKey));
  for (let i = 0; i < 7; i++)
    statuses.push(await post("/v1/catalog/batch", free.apiKey, { slugs: ["github", "npm"] }));
  statuses.push(await get("/v1/search?q=git", free.apiKey));
  for (let i = 0; i < 3; i++) statuses.push(await get("/v1/catalog/github", pro.apiKey));
  // the pro key is regenerated mid-day: its usage carries over to the new key
  const regen = await t.req(`/admin/accounts/${pro.accountId}/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const pro2 = { ...pro, apiKey: ((await regen.json()) as { apiKey: string }).apiKey };
  for (let i = 0; i < 2; i++) statuses.push(await get("/v1/catalog/npm", pro2.apiKey));
  statuses.push(await post("/v1/catalog/batch", pro2.apiKey, { slugs: ["github"] }));
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  expect(statuses).toContain(404);
  await settle(t.deps.usage, metered);
  return { free, pro: pro2 };
}

interface UsageAnswer {
  status: number;
  body: { endpoints: Record<string, { used: number; limit: number | null }> };
}

async function usage(t: TestApp, key: string): Promise<UsageAnswer> {
  const r = await t.get("/v1/usage", key);
  return { status: r.status, body: (await r.json()) as UsageAnswer["body"] };
}

withRedis("counters rebuild (Upstash counter store over a real redis-server)", () => {
  let redis: RedisHarness;
  let t: TestApp;
  beforeAll(async () => {
    setLogLevel("error");
    redis = await startRedisHarness();
    t = await makeApp(redis.env);
  });
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
    setLogLevel("info");
  });

  test("wipe the counters, rebuild from today's events, same GET /v1/usage answer", async () => {
    const { free, pro } = await traffic(t);
    const before = [await usage(t, free.apiKey), await usage(t, pro.apiKey)];
    expect(before.map((u) => u.status)).toEqual([200, 200]);
    expect(before[0]?.body.endpoints.batch?.used).toBe(5);
    expect(before[1]?.body.endpoints.catalog?.used).toBe(5);

    // the counter store loses everything (redis-server restarted without persistence)
    await redis.killRedis();
    await redis.startRedis();
    let wiped = await usage(t, free.apiKey);
    await until(async () => {
      wiped = await usage(t, free.apiKey);
      return wiped.status === 200;
    });
    expect(wiped.body.endpoints.batch?.used).toBe(0);

    const out = await countersRebuild(t.deps.store, t.deps.config);
    expect(out).toContain("rebuilt");
    expect([await usage(t, free.apiKey), await usage(t, pro.apiKey)]).toEqual(before);
    // a second run changes nothing (counters are only raised to the log's counts)
    await countersRebuild(t.deps.store, t.deps.config);
    expect([await usage(t, free.apiKey), await usage(t, pro.apiKey)]).toEqual(before);
  });
});

describe("counters rebuild (in-memory counter store)", () => {
  test("a restarted service rebuilds its counters from the event log at start", async () => {
    setLogLevel("error");
    const dataDir = tempDir("usage-c-");
    const first = await makeApp({ DATA_DIR: dataDir });
    const { free, pro } = await traffic(first);
    const before = [await usage(first, free.apiKey), await usage(first, pro.apiKey)];
    await first.deps.close();

    const second = await makeApp({ DATA_DIR: dataDir });
    try {
      expect([await usage(second, free.apiKey), await usage(second, pro.apiKey)]).toEqual(before);
      // the admin command has nothing to rebuild: the counters live in the service's memory
      await expect(countersRebuild(second.deps.store, second.deps.config)).rejects.toThrow(
        "UPSTASH_REDIS_REST_URL",
      );
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
      setLogLevel("info");
    }
  });

  test("events a crashed process left in a spill file count at once after the restart; the file is replayed once ready", async () => {
    setLogLevel("error");
    const dataDir = tempDir("usage-c-");
    const first = await makeApp({ DATA_DIR: dataDir });
    const a = await account(first, "free");
    const principal = await first.deps.accounts.verifyKey(a.apiKey);
    await first.deps.close();
    // what an earlier version's recorder spilled when the event store was down: one event a line
    const ts = new Date().toISOString();
    const spilled = Array.from({ length: 4 }, (_, i) => ({
      id: newId(),
      ts,
      day: ts.slice(0, 10),
      accountId: a.accountId,
      keyId: principal?.keyId,
      tier: "free",
      bucket: "search",
      route: "/v1/search",
      slug: null,
      variant: null,
      status: i === 3 ? 429 : 200,
      latencyMs: 1,
    }));
    mkdirSync(join(dataDir, "spill"), { recursive: true });
    writeFileSync(
      join(dataDir, "spill", "usage-crashed.jsonl"),
      spilled.map((e) => `${JSON.stringify(e)}\n`).join(""),
    );
    const second = await makeApp({ DATA_DIR: dataDir });
    try {
      // counted before the replay: the counters are seeded from the spill files too
      expect((await usage(second, a.apiKey)).body.endpoints.search?.used).toBe(3);
      expect(readdirSync(join(dataDir, "spill")).filter((f) => f.endsWith(".jsonl"))).toHaveLength(
        1,
      );
      // ready, naming the backlog
      const ready = await second.req("/readyz");
      expect(ready.status).toBe(200);
      const { usage: cond } = (await ready.json()) as {
        usage: { backlog: { spillFiles: number; spillBytes: number; replaying: boolean } };
      };
      expect(cond.backlog).toMatchObject({ spillFiles: 1, replaying: false });
      expect(cond.backlog.spillBytes).toBeGreaterThan(0);
      // the replay runs in the background; counted once
      second.deps.startReplay();
      await until(
        () => readdirSync(join(dataDir, "spill")).filter((f) => f.endsWith(".jsonl")).length === 0,
        5_000,
        "the replay",
      );
      expect((await usage(second, a.apiKey)).body.endpoints.search?.used).toBe(3);
      const after = (await (await second.req("/readyz")).json()) as {
        usage: { backlog: { spillFiles: number; spillBytes: number } };
      };
      expect(after.usage.backlog).toMatchObject({ spillFiles: 0, spillBytes: 0 });
      const day = ts.slice(0, 10);
      const r = await second.get(
        `/v1/analytics/usage?from=${day}&to=${day}&bucket=search`,
        a.apiKey,
      );
      expect(
        ((await r.json()) as { totals: { search: { requests: number } } }).totals.search.requests,
      ).toBe(4);
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
      setLogLevel("info");
    }
  });
});
