import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { utcDay } from "../../src/platform/day";
import type { Bucket } from "../../src/quota/limits";
import { dailyKey } from "../../src/quota/store/port";
import { UpstashCounterStore } from "../../src/quota/store/upstash";
import { createEnterprise, freePort, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";
import { type RedisHarness, startRedisHarness, withRedis } from "../support/redis";
import { until } from "../support/wait";

/** Fail-open: the counter store dies, hangs or was never configured; requests keep being served. */

type Ready = { status: string; counters: { kind: string; state: string; since: string | null } };

withRedis("redis-server killed mid-run", () => {
  let h: RedisHarness;
  let t: TestApp;
  beforeAll(async () => {
    h = await startRedisHarness();
    t = await makeApp({ ...h.env, LOG_LEVEL: "info" });
  });
  afterAll(async () => {
    await t.close();
    await h.stop();
  });

  /** the raw counter of a key's bucket today, read from redis through the Upstash protocol */
  async function rawCount(accountId: string, bucket: Bucket): Promise<number> {
    const account = await t.deps.accounts.getAccount(accountId);
    const keyId = account?.keys[0]?.id ?? "";
    const store = new UpstashCounterStore({ url: h.url, token: h.token, timeoutMs: 2000 });
    const [n] = await store.read([dailyKey(utcDay(new Date()), keyId, bucket)]);
    return n ?? 0;
  }

  const readyz = async () => {
    const r = await t.req("/readyz");
    expect(r.status).toBe(200);
    return (await r.json()) as Ready;
  };

  test(
    "served unenforced while it is down; when it is back empty, the outage's traffic counts again",
    async () => {
      const acct = await createEnterprise(t, { catalog: 3 });
      let served = 0;
      const get = async () => {
        const r = await t.get("/v1/catalog/github", acct.apiKey);
        if (r.status === 200) served++;
        return r;
      };
      for (let i = 0; i < 2; i++) {
        const r = await get();
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBe("3");
      }
      expect((await readyz()).counters).toEqual({ kind: "upstash", state: "ok", since: null });

      const stderr = spyOn(console, "error").mockImplementation(() => {});
      const stdout = spyOn(console, "log").mockImplementation(() => {});
      const lines = () =>
        [...stderr.mock.calls, ...stdout.mock.calls].map((c) => JSON.parse(String(c[0])));
      try {
        const killedAt = Date.now();
        await h.killRedis();
        for (let i = 0; i < 6; i++) {
          const r = await get();
          expect(r.status).toBe(200);
          expect(r.headers.get("x-ratelimit-limit")).toBeNull();
          expect(r.headers.get("x-ratelimit-remaining")).toBeNull();
          expect(r.headers.get("x-ratelimit-reset")).not.toBeNull();
          expect(((await r.json()) as { slug: string }).slug).toBe("github");
        }
        const usage = await t.get("/v1/usage", acct.apiKey);
        expect(usage.status).toBe(500);
        const body = (await usage.json()) as { error: string; message: string };
        expect(body.error).toBe("internal_error");
        expect(body.message).not.toMatch(/redis|upstash|ECONN|127\.0\.0\.1|stack/i);
        // readiness stays 200; its body and one log line say since when the store is degraded
        const down = await readyz();
        expect(down.status).toBe("ready");
        expect(down.counters.state).toBe("degraded");
        expect(Date.parse(down.counters.since ?? "")).toBeGreaterThanOrEqual(killedAt - 1000);
        const degraded = lines().filter((l) => l.counterStore === "degraded");
        expect(degraded).toHaveLength(1);
        expect(degraded[0].since).toBe(down.counters.since);
        expect(lines().filter((l) => l.msg.includes("counter store unavailable"))).toHaveLength(1);

        // redis comes back empty (no persistence); the breaker probes it every second
        await h.startRedis();
        let resumed: Response | null = null;
        const until = Date.now() + 30_000;
        while (!resumed && Date.now() < until) {
          const r = await get();
          if (r.headers.get("x-ratelimit-limit") === "3") resumed = r;
          else await Bun.sleep(100);
        }
        // the first answer enforced again is a refusal: the store came back empty, but this
        // process served 8 today and every consume first raises the counter to that
        expect(resumed?.status).toBe(429);
        // the store's return is logged once, and the counters are re-seeded from the usage log
        await waitFor(() => lines().some((l) => l.msg.includes("re-seeded")));
        expect(lines().filter((l) => l.counterStore === "ok")).toHaveLength(1);
        expect((await readyz()).counters).toEqual({ kind: "upstash", state: "ok", since: null });
      } finally {
        stderr.mockRestore();
        stdout.mockRestore();
      }
      // every request served (2 before, 6+ during the outage, all in the usage log) counts again:
      // the key is over its cap of 3, so enforcement refuses at once instead of granting 3 more
      expect(served).toBeGreaterThanOrEqual(8);
      // (one process: its own count of what it served is the counter's floor, so none is lost
      // to a request in flight while the re-seed read the log)
      const raw = await rawCount(acct.accountId, "catalog");
      expect(raw).toBe(served);
      const r = await t.get("/v1/catalog/github", acct.apiKey);
      expect(r.status).toBe(429);
      const usage = await t.get("/v1/usage", acct.apiKey);
      expect(usage.status).toBe(200);
      expect(
        ((await usage.json()) as { endpoints: Record<string, { used: number }> }).endpoints.catalog
          ?.used,
      ).toBe(raw);
    },
    { timeout: 60_000 },
  );

  test("a store found empty without an outage (restarted between requests) is re-seeded", async () => {
    const acct = await createEnterprise(t, { catalog: 5 });
    for (let i = 0; i < 5; i++)
      expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 429, "rate_limit_exceeded");
    // no request meets the dead store: the breaker never opens
    await h.killRedis();
    await h.startRedis();
    // once the proxy has reconnected, the store is there but empty
    await waitFor(async () => (await rawCount(acct.accountId, "catalog").catch(() => -1)) === 0);
    // the first requests find the day's seed mark missing and trigger the re-seed; the key is
    // at its cap by this process's tally, which each consume raises the counter to first, so
    // none is served, concurrent ones included
    const during = await Promise.all(
      Array.from({ length: 20 }, () => t.get("/v1/catalog/github", acct.apiKey)),
    );
    expect(during.map((r) => r.status)).toEqual(Array(20).fill(429));
    // the emptied store took no unit for them: the counter stays 5 after the re-seed (awaiting
    // reseed() waits for the one the requests started, then runs it once more)
    await t.deps.quota.reseed("test: wait for the re-seed");
    expect(await rawCount(acct.accountId, "catalog")).toBe(5);
    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 429, "rate_limit_exceeded");
    expect((await readyz()).counters.state).toBe("ok");
  });

  test("a key under its cap when the store empties keeps exactly its remaining requests", async () => {
    const acct = await createEnterprise(t, { catalog: 6 });
    for (let i = 0; i < 4; i++)
      expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
    await h.killRedis();
    await h.startRedis();
    await waitFor(async () => (await rawCount(acct.accountId, "catalog").catch(() => -1)) === 0);
    const during = await Promise.all(
      Array.from({ length: 10 }, () => t.get("/v1/catalog/github", acct.apiKey)),
    );
    expect(during.filter((r) => r.status === 200)).toHaveLength(2);
    expect(during.filter((r) => r.status === 429)).toHaveLength(8);
    await t.deps.quota.reseed("test: wait for the re-seed");
    expect(await rawCount(acct.accountId, "catalog")).toBe(6);
    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 429, "rate_limit_exceeded");
  });

  test("GET /v1/usage reports the requests served while the store was down, above the limit", async () => {
    // a free key: batch is capped at 5 a day
    const key = await t.key("free");
    let served = 0;
    const batch = async () => {
      const r = await t.post("/v1/catalog/batch", key, { slugs: ["github"] });
      if (r.status === 200) served++;
      return r;
    };
    for (let i = 0; i < 3; i++) expect((await batch()).status).toBe(200);
    const stderr = spyOn(console, "error").mockImplementation(() => {});
    const stdout = spyOn(console, "log").mockImplementation(() => {});
    try {
      await h.killRedis();
      // served unenforced while the store is down (the spec: never blocked for that)
      for (let i = 0; i < 6; i++) expect((await batch()).status).toBe(200);
      await h.startRedis();
      // the breaker probes every second (requests until then are served unenforced too); the
      // probe's answer is enforced again, and refused
      const until = Date.now() + 30_000;
      let status = 200;
      while (Date.now() < until) {
        const r = await batch();
        status = r.status;
        if (r.headers.get("x-ratelimit-limit") === "5") break;
        await Bun.sleep(100);
      }
      expect(status).toBe(429);
      await t.deps.quota.reseed("test: wait for the re-seed");
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
    const u = await t.get("/v1/usage", key);
    expect(u.status).toBe(200);
    const body = (await u.json()) as { endpoints: Record<string, { used: number; limit: number }> };
    // every request served today, the unenforced ones included; the refusal is not counted
    expect(served).toBeGreaterThanOrEqual(9);
    expect(body.endpoints.batch).toEqual({ used: served, limit: 5 });
  }, 60_000);
});

const waitFor = (cond: () => boolean | Promise<boolean>, what = "condition") =>
  until(cond, 10_000, what, 20);

describe("a counter store that never answers", () => {
  let hang: ReturnType<typeof Bun.serve>;
  let t: TestApp;
  beforeAll(async () => {
    hang = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise(() => {}) });
    t = await makeApp({
      UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${hang.port}`,
      UPSTASH_REDIS_REST_TOKEN: "t",
      COUNTER_TIMEOUT_MS: "50",
    });
  });
  afterAll(async () => {
    await t.close();
    hang.stop(true);
  });

  test("requests are served after COUNTER_TIMEOUT_MS without enforcement; usage is 500", async () => {
    const key = await t.key("free");
    for (let i = 0; i < 3; i++) {
      const r = await t.get("/v1/catalog/github", key);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBeNull();
      expect(((await r.json()) as { slug: string }).slug).toBe("github");
    }
    await expectError(await t.get("/v1/usage", key), 500, "internal_error");
  });
});

describe("nothing listening at the configured address", () => {
  test("connection refused: served unenforced", async () => {
    const port = await freePort();
    const t = await makeApp({
      UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${port}`,
      UPSTASH_REDIS_REST_TOKEN: "t",
    });
    try {
      const key = await t.key("free");
      for (let i = 0; i < 120; i++)
        expect((await t.get("/v1/catalog/github", key)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  test("not configured: the in-memory store enforces within the instance", async () => {
    const t = await makeApp();
    try {
      expect(t.deps.quota.store.kind).toBe("memory");
    } finally {
      await t.close();
    }
  });
});
