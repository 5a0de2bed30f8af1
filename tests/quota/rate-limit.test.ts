import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { AccountService } from "../../src/accounts/service";
import { openEmbeddedStore } from "../../src/deps";
import { rateLimitPlugin } from "../../src/guard/rate-limit-macros";
import { clientIp, rememberClientAddress } from "../../src/http/client-ip";
import { errorPlugin } from "../../src/http/error-plugin";
import { RATE_LIMITS } from "../../src/quota/limits";
import { type BackoffPolicy, backoffDelayMs, RateLimiter } from "../../src/quota/rate-limit";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import { testConfig } from "../support/app";
import { expectError } from "../support/errors";

describe("RateLimiter (fixed windows)", () => {
  test("N per window, then refused until the window ends", async () => {
    let clock = Date.UTC(2031, 0, 1, 10, 0, 15);
    const rl = new RateLimiter(new MemoryCounterStore(() => clock), null, () => clock);
    const p = RATE_LIMITS.forgotPassword;
    for (let i = 0; i < 3; i++) expect((await rl.hit(p, "ip:1.2.3.4")).allowed).toBe(true);
    const refused = await rl.hit(p, "ip:1.2.3.4");
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, retryAfter: 3600 - 15 });
    expect((await rl.hit(p, "ip:5.6.7.8")).allowed).toBe(true);
    expect((await rl.hit(RATE_LIMITS.resendVerification, "ip:1.2.3.4")).allowed).toBe(true);
    clock = Date.UTC(2031, 0, 1, 11, 0, 0);
    expect((await rl.hit(p, "ip:1.2.3.4")).allowed).toBe(true);
  });

  test("per-minute policy: 60 then 429 with the seconds left in the minute", async () => {
    const clock = Date.UTC(2031, 0, 1, 10, 0, 45);
    const rl = new RateLimiter(new MemoryCounterStore(() => clock), null, () => clock);
    for (let i = 0; i < 60; i++)
      expect((await rl.hit(RATE_LIMITS.usage, "account:a")).allowed).toBe(true);
    expect(await rl.hit(RATE_LIMITS.usage, "account:a")).toMatchObject({
      allowed: false,
      retryAfter: 15,
    });
  });
});

describe("RateLimiter backoff (growing delays)", () => {
  const policy: BackoffPolicy = { name: "t", free: 3, windowSeconds: 900, maxDelaySeconds: 60 };

  test("free failures, then 1, 2, 4... s, capped", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map((n) => backoffDelayMs(policy, n));
    expect(delays).toEqual([0, 0, 0, 1000, 2000, 4000, 8000, 16000, 32000, 60000]);
  });

  test("each failure past the free ones sets a wait for that identity only", async () => {
    let clock = Date.UTC(2031, 0, 1, 10, 0, 0);
    const rl = new RateLimiter(new MemoryCounterStore(() => clock), null, () => clock);
    for (let i = 0; i < 3; i++) expect(await rl.failed(policy, "a")).toBe(0);
    expect(await rl.waitLeft(policy, "a")).toBe(0);
    expect(await rl.failed(policy, "a")).toBe(1000);
    expect(await rl.waitLeft(policy, "a")).toBe(1000);
    expect(await rl.waitLeft(policy, "b")).toBe(0);
    clock += 400;
    expect(await rl.waitLeft(policy, "a")).toBe(600);
    clock += 600;
    expect(await rl.waitLeft(policy, "a")).toBe(0);
    expect(await rl.failed(policy, "a")).toBe(2000);
    expect(await rl.waitLeft(policy, "a")).toBe(2000);
    // a new window starts the count over
    clock = Date.UTC(2031, 0, 1, 10, 15, 0);
    expect(await rl.waitLeft(policy, "a")).toBe(0);
    expect(await rl.failed(policy, "a")).toBe(0);
  });
});

describe("clientIp", () => {
  const req = (xff?: string) =>
    new Request("http://x/", { headers: xff ? { "x-forwarded-for": xff } : {} });
  const server = { requestIP: () => ({ address: "::ffff:10.0.0.9" }) };

  test("the socket address; X-Forwarded-For is ignored unless TRUST_PROXY", () => {
    expect(clientIp(req("6.6.6.6"), server, false)).toBe("10.0.0.9");
    expect(clientIp(req(), null, false)).toBe("unknown");
  });

  test("behind a trusted proxy: the last X-Forwarded-For entry (the one the proxy added)", () => {
    expect(clientIp(req("6.6.6.6, 203.0.113.7"), server, true)).toBe("203.0.113.7");
    expect(clientIp(req(), server, true)).toBe("10.0.0.9");
  });

  test("an address recorded by the entry point wins over Elysia's server", () => {
    const r = req();
    rememberClientAddress(r, "198.51.100.4");
    expect(clientIp(r, server, false)).toBe("198.51.100.4");
  });
});

async function limitedApp(trustProxy: boolean) {
  const config = testConfig();
  const accounts = new AccountService(openEmbeddedStore(config).accounts);
  // a fixed clock: the whole test runs inside one window
  const clock = () => Date.UTC(2031, 0, 1, 10, 0, 5);
  const limiter = new RateLimiter(new MemoryCounterStore(clock), null, clock);
  const app = new Elysia()
    .use(errorPlugin)
    .use(
      rateLimitPlugin({ accounts, limiter, trustProxy, upgradeUrl: "https://u.example/pricing" }),
    )
    .post("/auth/forgot-password", ({ clientIp }) => ({ ok: true, ip: clientIp }), {
      ipRateLimit: RATE_LIMITS.forgotPassword,
    })
    .get("/v1/analytics/usage", ({ principal }) => ({ account: principal.accountId }), {
      accountRateLimit: RATE_LIMITS.analyticsUsage,
    });
  return { app, accounts };
}

describe("rate-limit macros", () => {
  test("ipRateLimit: 3 per hour per client IP, then 429 rate_limit_exceeded with Retry-After", async () => {
    const { app } = await limitedApp(true);
    const post = (ip: string) =>
      app.handle(
        new Request("http://localhost/auth/forgot-password", {
          method: "POST",
          headers: { "x-forwarded-for": ip },
        }),
      );
    for (let i = 0; i < 3; i++) expect((await post("203.0.113.1")).status).toBe(200);
    const refused = await post("203.0.113.1");
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body.error).toBe("rate_limit_exceeded");
    expect(body.message).toMatch(
      /^Rate limit of 3 requests per hour reached for POST \/auth\/forgot-password/,
    );
    expect(body.upgrade_url).toBe("https://u.example/pricing");
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(3600);
    expect(body.reset_in_seconds).toBe(retry);
    expect((await post("203.0.113.2")).status).toBe(200);
  });

  test("without TRUST_PROXY a forged X-Forwarded-For buys no new budget", async () => {
    const { app } = await limitedApp(false);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await app.handle(
            new Request("http://localhost/auth/forgot-password", {
              method: "POST",
              headers: { "x-forwarded-for": `198.51.100.${i}` },
            }),
          )
        ).status,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  test("over a real socket the peer address is the identity", async () => {
    const { app } = await limitedApp(false);
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, srv) => {
        rememberClientAddress(req, srv.requestIP(req)?.address);
        return app.fetch(req);
      },
    });
    try {
      const r = await fetch(`http://127.0.0.1:${server.port}/auth/forgot-password`, {
        method: "POST",
      });
      expect(await r.json()).toEqual({ ok: true, ip: "127.0.0.1" });
    } finally {
      server.stop(true);
    }
  });

  test("accountRateLimit: 60/minute per account; callers without credentials per IP", async () => {
    const { app, accounts } = await limitedApp(true);
    const a = await accounts.createAccountWithKey({ tier: "free" });
    const b = await accounts.createAccountWithKey({ tier: "free" });
    const get = (headers: Record<string, string>) =>
      app.handle(new Request("http://localhost/v1/analytics/usage", { headers }));
    for (let i = 0; i < 60; i++) expect((await get({ "x-api-key": a.apiKey })).status).toBe(200);
    const refused = await get({ "x-api-key": a.apiKey });
    await expectError(refused, 429, "rate_limit_exceeded", "per minute");
    expect(refused.headers.get("retry-after")).toBe("55");
    expect((await get({ "x-api-key": b.apiKey })).status).toBe(200);

    const anon = { "x-forwarded-for": "192.0.2.50" };
    for (let i = 0; i < 60; i++) {
      const r = await get(anon);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
    }
    await expectError(await get(anon), 429, "rate_limit_exceeded");
    await expectError(await get({ "x-forwarded-for": "192.0.2.51" }), 401, "invalid_api_key");
  });
});
