import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { secondsToUtcMidnight } from "../../src/quota/gate";
import { RateLimiter } from "../../src/quota/rate-limit";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import { ADMIN_TOKEN, makeApp, type TestApp, useAccountIdBearer } from "../support/app";
import { expectError } from "../support/errors";
import { until } from "../support/wait";

/** Daily quotas through the real app (embedded store, real catalog, in-memory counter store). */
let t: TestApp;
beforeAll(async () => {
  t = await makeApp({}, { customize: useAccountIdBearer });
});
afterAll(async () => {
  await t.close();
});

interface Usage {
  date: string;
  tier: string;
  endpoints: Record<string, { used: number; limit: number | null }>;
}
const usage = async (key: string) => (await (await t.get("/v1/usage", key)).json()) as Usage;

const admin = (path: string, method: string, body?: unknown) =>
  t.req(path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function account(tier: string, limits?: Record<string, number | null>) {
  const r = await admin("/admin/keys", "POST", { tier, ...(limits ? { limits } : {}) });
  expect(r.status).toBe(201);
  return (await r.json()) as { accountId: string; keyId: string; apiKey: string };
}

describe("daily quota on a metered route (free tier, catalog bucket: 100/day)", () => {
  test("every allowed request carries X-RateLimit-*, then 429 with the spec's body", async () => {
    const key = await t.key("free");
    for (let i = 1; i <= 100; i++) {
      const r = await t.get("/v1/catalog/github", key);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("100");
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(100 - i));
      const reset = Number(r.headers.get("x-ratelimit-reset"));
      expect(Math.abs(reset - secondsToUtcMidnight())).toBeLessThanOrEqual(2);
    }
    const refused = await t.get("/v1/catalog/github", key);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      "error",
      "message",
      "reset_in_seconds",
      "upgrade_url",
    ]);
    expect(body.error).toBe("rate_limit_exceeded");
    expect(body.message).toMatch(/^Daily limit of 100 catalog requests reached for the free tier/);
    expect(body.upgrade_url).toBe(t.deps.config.UPGRADE_URL);
    expect(refused.headers.get("retry-after")).toBe(String(body.reset_in_seconds));
    expect(Math.abs(Number(body.reset_in_seconds) - secondsToUtcMidnight())).toBeLessThanOrEqual(2);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  test("refused requests use no quota: used never exceeds limit", async () => {
    const key = await t.key("free");
    for (let i = 0; i < 105; i++) await t.get("/v1/catalog/github", key);
    const u = await usage(key);
    expect(u.endpoints.catalog).toEqual({ used: 100, limit: 100 });
  });

  test("after a mid-day downgrade, used is the day's full count, above the new limit", async () => {
    const acct = await account("pro");
    for (let i = 0; i < 7; i++)
      expect((await t.post("/v1/catalog/batch", acct.apiKey, { slugs: ["github"] })).status).toBe(
        200,
      );
    const down = await admin(`/admin/accounts/${acct.accountId}`, "PATCH", { tier: "free" });
    expect(down.status).toBe(200);
    const u = await usage(acct.apiKey);
    expect(u.tier).toBe("free");
    expect(u.endpoints.batch).toEqual({ used: 7, limit: 5 });
    expect((await t.post("/v1/catalog/batch", acct.apiKey, { slugs: ["github"] })).status).toBe(
      429,
    );
    // the refusal did not count
    expect((await usage(acct.apiKey)).endpoints.batch).toEqual({ used: 7, limit: 5 });
  });

  test("keys and buckets are counted separately", async () => {
    const a = await t.key("free");
    const b = await t.key("free");
    await t.get("/v1/catalog/github", a);
    await t.get("/v1/catalog/github", a);
    await t.post("/v1/catalog/batch", a, { slugs: ["github"] });
    const ua = await usage(a);
    expect(ua.endpoints.catalog?.used).toBe(2);
    expect(ua.endpoints.batch?.used).toBe(1);
    expect((await usage(b)).endpoints.catalog?.used).toBe(0);
  });
});

describe("the svg bucket (free: 50/day)", () => {
  test("50 logos, then the spec's example message", async () => {
    const key = await t.key("free");
    for (let i = 1; i <= 50; i++) {
      const r = await t.get("/v1/svg/github", key);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(50 - i));
    }
    const refused = await t.get("/v1/svg/github", key);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^Daily limit of 50 svg requests reached for the free tier/,
    );
    expect((await usage(key)).endpoints.svg).toEqual({ used: 50, limit: 50 });
  });
});

describe("limits per tier", () => {
  test("a bucket without a cap sends X-RateLimit-Reset only (pro catalog)", async () => {
    const key = await t.key("pro");
    const r = await t.get("/v1/catalog/github", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-reset")).not.toBeNull();
    expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    expect(r.headers.get("x-ratelimit-remaining")).toBeNull();
    const batch = await t.post("/v1/catalog/batch", key, { slugs: ["github"] });
    expect(batch.headers.get("x-ratelimit-limit")).toBe("50");
    expect(batch.headers.get("x-ratelimit-remaining")).toBe("49");
  });

  test("internal keys are unlimited but still counted", async () => {
    const key = await t.key("internal");
    for (let i = 0; i < 110; i++) {
      const r = await t.get("/v1/catalog/github", key);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    }
    const u = await usage(key);
    expect(u.tier).toBe("internal");
    expect(u.endpoints.catalog).toEqual({ used: 110, limit: null });
  });

  test("enterprise accounts use their custom limits; other buckets are uncapped", async () => {
    const acct = await account("enterprise", { catalog: 2, batch: null });
    for (let i = 0; i < 2; i++) {
      const r = await t.get("/v1/catalog/github", acct.apiKey);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("2");
    }
    const refused = await t.get("/v1/catalog/github", acct.apiKey);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^Daily limit of 2 catalog requests reached for the enterprise tier/,
    );
    const batch = await t.post("/v1/catalog/batch", acct.apiKey, { slugs: ["github"] });
    expect(batch.status).toBe(200);
    expect(batch.headers.get("x-ratelimit-limit")).toBeNull();
    const u = await usage(acct.apiKey);
    expect(u.tier).toBe("enterprise");
    expect(u.endpoints.catalog).toEqual({ used: 2, limit: null });
  });

  test("an operator raising an account's limits takes effect (PATCH /admin/accounts/:id)", async () => {
    const acct = await account("enterprise", { catalog: 1 });
    expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 429, "rate_limit_exceeded");
    const patched = await admin(`/admin/accounts/${acct.accountId}`, "PATCH", {
      tier: "enterprise",
      limits: { catalog: 3 },
    });
    expect(patched.status).toBe(200);
    const r = await t.get("/v1/catalog/github", acct.apiKey);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-remaining")).toBe("1");
  });

  test("the batch bucket counts calls, not slugs (free: 5 calls/day)", async () => {
    const key = await t.key("free");
    const slugs = ["github", "gitlab", "slack", "stripe", "figma", "notion", "npm", "docker"];
    for (let i = 1; i <= 5; i++) {
      const r = await t.post("/v1/catalog/batch", key, { slugs });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(5 - i));
    }
    const refused = await t.post("/v1/catalog/batch", key, { slugs: ["github"] });
    await expectError(refused, 429, "rate_limit_exceeded", "batch");
    expect((await usage(key)).endpoints.batch).toEqual({ used: 5, limit: 5 });
  });
});

describe("which outcomes count (docs/quota.md)", () => {
  test("404 service_not_found counts", async () => {
    const key = await t.key("free");
    const r = await t.get("/v1/catalog/no-such-brand-xyz", key);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: string }).error).toBe("service_not_found");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("99");
    expect((await usage(key)).endpoints.catalog?.used).toBe(1);
  });

  test("a 422 from the handler counts (batch over the tier's slug cap)", async () => {
    const key = await t.key("free");
    const slugs = Array.from({ length: 11 }, (_, i) => `brand-${i}`);
    const r = await t.post("/v1/catalog/batch", key, { slugs });
    expect(r.status).toBe(422);
    expect(((await r.json()) as { error: string }).error).toBe("batch_too_large");
    expect((await usage(key)).endpoints.batch?.used).toBe(1);
  });

  test("a 422 from request validation does not count (checked before the quota)", async () => {
    const key = await t.key("free");
    const noSlugs = await t.post("/v1/catalog/batch", key, { nope: 1 });
    expect(noSlugs.status).toBe(422);
    expect(((await noSlugs.json()) as { error: string }).error).toBe("validation_error");
    const badSize = await t.get("/v1/png/github?size=4096", key);
    expect(badSize.status).toBe(422);
    // a slug that cannot exist is found by the same schema check: 404, not counted either
    const longSlug = await t.get(`/v1/catalog/${"a".repeat(201)}`, key);
    await expectError(longSlug, 404, "service_not_found");
    const u = await usage(key);
    expect(u.endpoints.png?.used).toBe(0);
    expect(u.endpoints.batch?.used).toBe(0);
    expect(u.endpoints.catalog?.used).toBe(0);
  });

  test("401 does not count (no key, nothing to count against)", async () => {
    const r = await t.req("/v1/catalog/github");
    expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    await expectError(r, 401, "invalid_api_key");
  });
});

describe("server errors are refunded", () => {
  let f: TestApp;
  beforeAll(async () => {
    f = await makeApp(
      {},
      {
        customize: (deps) => {
          // fault injection: the catalog lookup fails for one slug
          const viewJson = deps.catalog.viewJson.bind(deps.catalog);
          deps.catalog.viewJson = (slug: string) => {
            if (slug === "github") throw new Error("injected failure");
            return viewJson(slug);
          };
        },
      },
    );
  });
  afterAll(async () => {
    await f.close();
  });

  test("a 500 gives its unit back", async () => {
    const key = await f.key("free");
    expect((await f.get("/v1/catalog/gitlab", key)).status).toBe(200);
    const logs = captureLogs();
    const failed = await f.get("/v1/catalog/github", key).finally(logs.restore);
    expect(logs.lines.map((l) => [l.level, l.msg, l.error])).toEqual([
      ["error", "unhandled error", "injected failure"],
    ]);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({
      error: "internal_error",
      message: "Internal server error",
    });
    // the refund lands after the response: wait for the count to come back down to 1
    const used = async () =>
      ((await (await f.get("/v1/usage", key)).json()) as Usage).endpoints.catalog?.used;
    await until(async () => (await used()) === 1, 4_000, "the refund");
    expect(await used()).toBe(1);
  });
});

describe("key regeneration carries the day's usage over", () => {
  test("POST /admin/accounts/:id/keys revokes the old key; the new key keeps today's counts", async () => {
    const acct = await account("free");
    for (let i = 0; i < 3; i++) await t.get("/v1/catalog/github", acct.apiKey);
    await t.post("/v1/catalog/batch", acct.apiKey, { slugs: ["github"] });
    const r = await admin(`/admin/accounts/${acct.accountId}/keys`, "POST");
    expect(r.status).toBe(201);
    const fresh = (await r.json()) as {
      accountId: string;
      keyId: string;
      apiKey: string;
      revokedKeyIds: string[];
    };
    expect(fresh.accountId).toBe(acct.accountId);
    expect(fresh.revokedKeyIds).toEqual([acct.keyId]);
    expect(fresh.apiKey).not.toBe(acct.apiKey);
    expect(r.headers.get("cache-control")).toBe("no-store");

    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 401, "invalid_api_key");
    const u = await usage(fresh.apiKey);
    expect(u.endpoints.catalog?.used).toBe(3);
    expect(u.endpoints.batch?.used).toBe(1);
    const next = await t.get("/v1/catalog/github", fresh.apiKey);
    expect(next.headers.get("x-ratelimit-remaining")).toBe("96");

    const again = (await (
      await admin(`/admin/accounts/${acct.accountId}/keys`, "POST")
    ).json()) as {
      apiKey: string;
    };
    expect((await usage(again.apiKey)).endpoints.catalog?.used).toBe(4);
  });

  test("unknown account: 404; no operator token: 401", async () => {
    const missing = await admin("/admin/accounts/nope/keys", "POST");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe("account_not_found");
    const acct = await account("free");
    const anon = await t.req(`/admin/accounts/${acct.accountId}/keys`, { method: "POST" });
    expect(anon.status).toBe(401);
    expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
  });
});

describe("GET /v1/usage", () => {
  test("exactly the spec's shape: date, tier, all seven buckets with used and limit", async () => {
    const key = await t.key("free");
    await t.get("/v1/catalog/github", key);
    const r = await t.get("/v1/usage", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const u = (await r.json()) as Usage;
    expect(Object.keys(u).sort()).toEqual(["date", "endpoints", "tier"]);
    expect(u.date).toBe(new Date().toISOString().slice(0, 10));
    expect(u.tier).toBe("free");
    expect(u.endpoints).toEqual({
      svg: { used: 0, limit: 50 },
      png: { used: 0, limit: 50 },
      webp: { used: 0, limit: 50 },
      catalog: { used: 1, limit: 100 },
      search: { used: 0, limit: 30 },
      domain: { used: 0, limit: 20 },
      batch: { used: 0, limit: 5 },
    });
  });

  test("pro limits follow the tier table (search 500, catalog uncapped, batch 50)", async () => {
    const u = await usage(await t.key("pro"));
    expect(u.endpoints).toEqual({
      svg: { used: 0, limit: 2000 },
      png: { used: 0, limit: 2000 },
      webp: { used: 0, limit: 2000 },
      catalog: { used: 0, limit: null },
      search: { used: 0, limit: 500 },
      domain: { used: 0, limit: 300 },
      batch: { used: 0, limit: 50 },
    });
  });

  test("consumes no bucket and carries no X-RateLimit headers", async () => {
    const key = await t.key("free");
    await t.get("/v1/catalog/github", key);
    const first = await usage(key);
    const r = await t.get("/v1/usage", key);
    expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    expect((await r.json()) as Usage).toEqual(first);
    expect((await t.get("/v1/catalog/github", key)).headers.get("x-ratelimit-remaining")).toBe(
      "98",
    );
  });

  test("missing or invalid credentials: 401 invalid_api_key", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { "x-api-key": "bak_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { "x-api-key": "garbage" },
      { authorization: "Bearer not-a-token" },
    ]) {
      const r = await t.req("/v1/usage", { headers });
      expect(r.status).toBe(401);
      const body = (await r.json()) as { error: string; message: string };
      expect(body.error).toBe("invalid_api_key");
      expect(body.message).toContain("X-API-Key");
    }
  });

  test("a bearer caller sees the counts of the account's active key", async () => {
    const acct = await account("free");
    await t.get("/v1/catalog/github", acct.apiKey);
    await t.get("/v1/catalog/github", acct.apiKey);
    const r = await t.req("/v1/usage", {
      headers: { authorization: `Bearer acct:${acct.accountId}` },
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as Usage).endpoints.catalog).toEqual({ used: 2, limit: 100 });
  });
});

describe("GET /v1/usage short-window cap (60 per minute)", () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await makeApp(
      { TRUST_PROXY: "true" },
      {
        customize: (deps) => {
          const clock = () => Date.UTC(2031, 0, 1, 10, 0, 30);
          deps.limiter = new RateLimiter(new MemoryCounterStore(clock), null, clock);
        },
      },
    );
  });
  afterAll(async () => {
    await r.close();
  });

  test("60 per account per minute, then 429 with Retry-After; other accounts unaffected", async () => {
    const a = await r.key("pro");
    for (let i = 0; i < 60; i++) expect((await r.get("/v1/usage", a)).status).toBe(200);
    const refused = await r.get("/v1/usage", a);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body.error).toBe("rate_limit_exceeded");
    expect(body.reset_in_seconds).toBe(30);
    expect((await r.get("/v1/usage", await r.key("pro"))).status).toBe(200);
  });

  test("without valid credentials the cap is per client IP (401s until then)", async () => {
    const from = (ip: string) => r.req("/v1/usage", { headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 60; i++) await expectError(await from("192.0.2.9"), 401, "invalid_api_key");
    await expectError(await from("192.0.2.9"), 429, "rate_limit_exceeded", "per minute");
    await expectError(await from("192.0.2.10"), 401, "invalid_api_key");
  });
});
