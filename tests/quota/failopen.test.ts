import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { createEnterprise, freePort, makeApp, type TestApp } from "../helpers";
import { type RedisHarness, startRedisHarness, withRedis } from "./redis-harness";

/** Fail-open: the counter store dies, hangs or was never configured; requests keep being served. */

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

  test(
    "requests are served unenforced while it is down, enforcement resumes when it is back",
    async () => {
      const acct = await createEnterprise(t, { catalog: 3 });
      for (let i = 0; i < 2; i++) {
        const r = await t.get("/v1/catalog/github", acct.apiKey);
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBe("3");
      }

      const stderr = spyOn(console, "error").mockImplementation(() => {});
      try {
        await h.killRedis();
        for (let i = 0; i < 6; i++) {
          const r = await t.get("/v1/catalog/github", acct.apiKey);
          expect(r.status).toBe(200);
          expect(r.headers.get("x-ratelimit-limit")).toBeNull();
          expect(r.headers.get("x-ratelimit-remaining")).toBeNull();
          expect(r.headers.get("x-ratelimit-reset")).not.toBeNull();
        }
        const usage = await t.get("/v1/usage", acct.apiKey);
        expect(usage.status).toBe(500);
        const body = (await usage.json()) as { error: string; message: string };
        expect(body.error).toBe("internal_error");
        expect(body.message).not.toMatch(/redis|upstash|ECONN|127\.0\.0\.1|stack/i);
        const warnings = stderr.mock.calls
          .map((c) => String(c[0]))
          .filter((l) => l.includes("counter store unavailable"));
        expect(warnings).toHaveLength(1);
      } finally {
        stderr.mockRestore();
      }

      await h.startRedis();
      // the breaker lets a probe through after its pause (2 s, doubling while the store is down)
      let resumed: Response | null = null;
      const until = Date.now() + 40_000;
      while (!resumed && Date.now() < until) {
        const r = await t.get("/v1/catalog/github", acct.apiKey);
        expect(r.status).toBe(200);
        if (r.headers.get("x-ratelimit-limit") === "3") resumed = r;
        else await Bun.sleep(100);
      }
      expect(resumed).not.toBeNull();
      // the restarted redis-server is empty (no persistence): the count starts again and holds
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await t.get("/v1/catalog/github", acct.apiKey)).status);
      expect(statuses.at(-1)).toBe(429);
      expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2);
      const usage = await t.get("/v1/usage", acct.apiKey);
      expect(usage.status).toBe(200);
      expect(
        ((await usage.json()) as { endpoints: Record<string, { used: number }> }).endpoints.catalog
          ?.used,
      ).toBe(3);
    },
    { timeout: 60_000 },
  );
});

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
    }
    const usage = await t.get("/v1/usage", key);
    expect(usage.status).toBe(500);
    expect(((await usage.json()) as { error: string }).error).toBe("internal_error");
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
