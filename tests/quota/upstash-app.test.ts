import { afterAll, beforeAll, expect, test } from "bun:test";
import { openEmbeddedStore } from "../../src/deps";
import { utcDay } from "../../src/platform/day";
import { dailyKey, KEY_PREFIX } from "../../src/quota/store/port";
import {
  ADMIN_TOKEN,
  createEnterprise,
  makeApp,
  type TestApp,
  tempDir,
  testConfig,
} from "../support/app";
import { expectError } from "../support/errors";
import { HAS_REDIS, type RedisHarness, startRedisHarness, withRedis } from "../support/redis";

/** The app with the Upstash counter store, through scripts/upstash-local.ts, on a real redis-server. */
let h: RedisHarness;
beforeAll(async () => {
  if (!HAS_REDIS) return;
  h = await startRedisHarness();
});
afterAll(async () => {
  await h?.stop();
});

withRedis("Upstash counter store behind the real app", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp(h.env);
  });
  afterAll(async () => {
    await t.close();
  });

  test("the app picked the Upstash adapter", () => {
    expect(t.deps.quota.store.kind).toBe("upstash");
  });

  test("quota, headers, 429 and usage work the same as in memory", async () => {
    const key = await t.key("free");
    for (let i = 1; i <= 5; i++) {
      const r = await t.post("/v1/catalog/batch", key, { slugs: ["github", "gitlab"] });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(5 - i));
    }
    const refused = await t.post("/v1/catalog/batch", key, { slugs: ["github"] });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^Daily limit of 5 batch requests reached for the free tier/,
    );
    const u = (await (await t.get("/v1/usage", key)).json()) as {
      endpoints: Record<string, { used: number; limit: number | null }>;
    };
    expect(u.endpoints.batch).toEqual({ used: 5, limit: 5 });
  });

  test("concurrent requests never push used past the limit", async () => {
    const acct = await createEnterprise(t, { catalog: 10 });
    const results = await Promise.all(
      Array.from({ length: 30 }, () => t.get("/v1/catalog/github", acct.apiKey)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(20);
    const u = (await (await t.get("/v1/usage", acct.apiKey)).json()) as {
      endpoints: Record<string, { used: number }>;
    };
    expect(u.endpoints.catalog?.used).toBe(10);
  });

  test("key regeneration carries the day's counts in Redis", async () => {
    const acct = await createEnterprise(t, { catalog: 5 });
    for (let i = 0; i < 4; i++)
      expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
    const day = utcDay(new Date());
    const oldKey = dailyKey(day, acct.keyId, "catalog");
    expect(await h.read(`${KEY_PREFIX}q:${day}:${acct.keyId}:*`)).toEqual({ [oldKey]: "4" });
    const r = await t.req(`/admin/accounts/${acct.accountId}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(r.status).toBe(201);
    const fresh = (await r.json()) as { apiKey: string; keyId: string };
    expect(fresh.keyId).not.toBe(acct.keyId);
    // the new key's counter starts at the old key's 4; the old key's counter stays
    const newKey = dailyKey(day, fresh.keyId, "catalog");
    expect(await h.read(`${KEY_PREFIX}q:${day}:${fresh.keyId}:catalog`)).toEqual({ [newKey]: "4" });
    expect((await t.get("/v1/catalog/github", fresh.apiKey)).status).toBe(200);
    expect(await h.read(`${KEY_PREFIX}q:${day}:*:catalog`)).toMatchObject({
      [oldKey]: "4",
      [newKey]: "5",
    });
    await expectError(await t.get("/v1/catalog/github", fresh.apiKey), 429, "rate_limit_exceeded");
    expect((await h.read(newKey))[newKey]).toBe("5");
  });
});

withRedis("two service instances on one counter store", () => {
  test("enforce one shared quota", async () => {
    const dataDir = tempDir();
    const a = await makeApp({ ...h.env, DATA_DIR: dataDir });
    // b reads a's accounts (one account database, as two instances share one MongoDB); each
    // instance has a DATA_DIR of its own for its usage writer, as a service process needs
    const b = await makeApp(
      { ...h.env, DATA_DIR: tempDir() },
      { store: openEmbeddedStore(testConfig({ ...h.env, DATA_DIR: dataDir })) },
    );
    try {
      expect(a.deps.quota).not.toBe(b.deps.quota);
      const acct = await createEnterprise(a, { catalog: 6 });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const app = i % 2 === 0 ? a : b;
        statuses.push((await app.get("/v1/catalog/github", acct.apiKey)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
      const ua = (await (await a.get("/v1/usage", acct.apiKey)).json()) as {
        endpoints: Record<string, { used: number }>;
      };
      const ub = (await (await b.get("/v1/usage", acct.apiKey)).json()) as typeof ua;
      expect(ua.endpoints.catalog?.used).toBe(6);
      expect(ub).toEqual(ua);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
