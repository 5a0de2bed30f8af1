import {
  afterAll,
  beforeAll,
  describe,
  expect,
  setDefaultTimeout,
  setSystemTime,
  spyOn,
  test,
} from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { buildDeps, openEmbeddedStore } from "../../src/deps";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import { VisitorCounter } from "../../src/visitor-counter/service";
import { makeApp, type TestApp, tempDir, testConfig } from "../support/app";
import { type RedisHarness, startRedisHarness } from "../support/redis";

// each test builds an app or starts a server: allow for a loaded machine
setDefaultTimeout(30_000);

const PATH = "/v1/public/visitor-counter";
const ON = { VISITOR_COUNTER_ENABLED: "true", TRUST_PROXY: "true" };

/** A request from one client (X-Forwarded-For is honoured: TRUST_PROXY=true). */
function visit(
  t: TestApp,
  method: "GET" | "POST" | "OPTIONS",
  ip: string,
  ua = "Mozilla/5.0 test",
  headers: Record<string, string> = {},
) {
  return t.req(PATH, {
    method,
    headers: { "x-forwarded-for": ip, "user-agent": ua, ...headers },
  });
}
const count = async (r: Response) => ((await r.json()) as { count: number }).count;

/** every file under a directory, as text */
function filesText(dir: string): string {
  return readdirSync(dir)
    .map((f) => join(dir, f))
    .map((p) => (statSync(p).isDirectory() ? filesText(p) : readFileSync(p, "utf8")))
    .join("\n");
}

describe("visitor counter disabled (default)", () => {
  test("GET, POST and OPTIONS are 404 not_found", async () => {
    const t = await makeApp();
    try {
      for (const method of ["GET", "POST", "OPTIONS"] as const) {
        const r = await visit(t, method, "198.51.100.1");
        expect(r.status).toBe(404);
        expect(((await r.json()) as { error: string }).error).toBe("not_found");
      }
    } finally {
      await t.close();
    }
  });
});

describe("visitor counter enabled", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp(ON);
  });
  afterAll(() => t.close());

  test("no key needed; GET reads, POST counts each visitor at most once per day", async () => {
    expect(await count(await visit(t, "GET", "198.51.100.10"))).toBe(0);
    const first = await visit(t, "POST", "198.51.100.10");
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.clone().json()).toEqual({ count: 1 });
    expect(await count(first)).toBe(1);
    expect(await count(await visit(t, "POST", "198.51.100.10"))).toBe(1); // same visitor
    expect(await count(await visit(t, "POST", "198.51.100.10", "Other UA/1.0"))).toBe(2);
    expect(await count(await visit(t, "POST", "198.51.100.11"))).toBe(3);
    expect(await count(await visit(t, "GET", "198.51.100.12"))).toBe(3); // reading counts nothing
    expect(await count(await visit(t, "POST", "198.51.100.11"))).toBe(3);
  });

  test("no raw IP is stored: not in DATA_DIR, and the once-a-day key holds only a salted hash", async () => {
    const ip = "203.0.113.77";
    await visit(t, "POST", ip);
    expect(filesText(t.deps.config.DATA_DIR)).not.toContain(ip);
    const day = new Date().toISOString().slice(0, 10);
    const h = await t.deps.visitors.visitorHash(day, ip, "Mozilla/5.0 test");
    expect(h).toMatch(/^[0-9a-f]{32}$/);
    expect(h).not.toContain(ip.replaceAll(".", ""));
    // the daily salt changes the hash every day
    expect(await t.deps.visitors.visitorHash("2000-01-01", ip, "Mozilla/5.0 test")).not.toBe(h);
  });

  test("CORS: any origin by default, and the preflight is answered", async () => {
    const r = await visit(t, "POST", "198.51.100.20", "ua", { origin: "https://blog.example" });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const pre = await visit(t, "OPTIONS", "198.51.100.20", "ua", {
      origin: "https://blog.example",
      "access-control-request-method": "POST",
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-methods")).toContain("GET");
    expect(pre.headers.get("access-control-max-age")).toBe("86400");
  });

  test("60 requests per minute per client IP, then 429 with Retry-After (CORS headers kept)", async () => {
    const ip = "198.51.100.30";
    // the window is aligned to the minute: the clock is set just after the next boundary so
    // 61 calls share one (instead of waiting up to 15 s for it)
    setSystemTime(new Date((Math.floor(Date.now() / 60_000) + 1) * 60_000 + 1000));
    try {
      for (let i = 0; i < 60; i++) {
        const r = await visit(t, i % 2 ? "GET" : "POST", ip);
        expect(r.status).toBe(200);
      }
      const r = await visit(t, "GET", ip, "ua", { origin: "https://blog.example" });
      expect(r.status).toBe(429);
      const retry = Number(r.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      const body = (await r.json()) as Record<string, unknown>;
      expect(body.error).toBe("rate_limit_exceeded");
      expect(body.reset_in_seconds).toBe(retry);
      expect((await visit(t, "GET", "198.51.100.31")).status).toBe(200); // another client
    } finally {
      setSystemTime();
    }
  });
});

describe("visitor counter origins", () => {
  test("VISITOR_COUNTER_ORIGINS: listed origins are echoed, others get no CORS grant", async () => {
    const t = await makeApp({
      ...ON,
      VISITOR_COUNTER_ORIGINS: "https://a.example, https://b.example",
    });
    try {
      const ok = await visit(t, "GET", "198.51.100.40", "ua", { origin: "https://b.example" });
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://b.example");
      expect(ok.headers.get("vary")).toContain("Origin");
      const other = await visit(t, "GET", "198.51.100.40", "ua", {
        origin: "https://evil.example",
      });
      expect(other.status).toBe(200);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      const pre = await visit(t, "OPTIONS", "198.51.100.40", "ua", { origin: "https://a.example" });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("https://a.example");
    } finally {
      await t.close();
    }
  });
});

describe("visitor counter days and restarts", () => {
  test("the same visitor counts again on the next UTC day", async () => {
    let now = new Date("2026-03-01T23:59:00Z");
    const t = await makeApp(ON, {
      customize: (deps) => {
        // the counter store's expiry follows the same clock
        const counters = new MemoryCounterStore(() => now.getTime());
        deps.visitors = new VisitorCounter(deps.store.visitors, counters, null, () => now);
      },
    });
    try {
      expect(await count(await visit(t, "POST", "198.51.100.50"))).toBe(1);
      expect(await count(await visit(t, "POST", "198.51.100.50"))).toBe(1);
      now = new Date("2026-03-02T00:00:30Z");
      expect(await count(await visit(t, "POST", "198.51.100.50"))).toBe(2);
      expect(await count(await visit(t, "POST", "198.51.100.50"))).toBe(2);
    } finally {
      await t.close();
    }
  });

  test("the total survives a restart (kept in the store)", async () => {
    const env = { ...ON, DATA_DIR: tempDir() };
    const first = await makeApp(env);
    await visit(first, "POST", "198.51.100.60");
    await visit(first, "POST", "198.51.100.61");
    await first.deps.close();
    const again = await makeApp(env);
    try {
      expect(await count(await visit(again, "GET", "198.51.100.62"))).toBe(2);
    } finally {
      await again.close();
    }
  });
});

describe("visitor counter over a shared Upstash counter store (real redis-server)", () => {
  let h: RedisHarness;
  beforeAll(async () => {
    h = await startRedisHarness();
  });
  afterAll(() => h?.stop());

  test("two instances sharing the stores count a visitor once and show one total", async () => {
    const config = testConfig({ ...ON, ...h.env });
    const store = openEmbeddedStore(config);
    // instance A does not close the store instance B closes
    const a = await buildDeps(config, { ...store, close: async () => {} });
    // each instance with a DATA_DIR of its own for its usage writer (one service per DATA_DIR)
    const b = await buildDeps(testConfig({ ...ON, ...h.env, DATA_DIR: tempDir() }), store);
    const appA = createApp(a);
    const appB = createApp(b);
    const on = (app: typeof appA, method: string, ip: string) =>
      app.handle(
        new Request(`http://localhost${PATH}`, {
          method,
          headers: { "x-forwarded-for": ip, "user-agent": "ua" },
        }),
      );
    try {
      expect(await count(await on(appA, "POST", "198.51.100.70"))).toBe(1);
      expect(await count(await on(appB, "POST", "198.51.100.70"))).toBe(1);
      expect(await count(await on(appB, "POST", "198.51.100.71"))).toBe(2);
      expect(await count(await on(appA, "GET", "198.51.100.72"))).toBe(2);
      // what the counter store holds: salted hashes, never the address
      const keys = (await (
        await fetch(h.url, {
          method: "POST",
          headers: { authorization: `Bearer ${h.token}` },
          body: JSON.stringify(["KEYS", "bapi:vc:*"]),
        })
      ).json()) as { result: string[] };
      expect(keys.result.length).toBe(2);
      for (const k of keys.result) expect(k).toMatch(/^bapi:vc:\d{4}-\d\d-\d\d:[0-9a-f]{32}$/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("when the counter store is down the visit counts (fails open)", async () => {
    const t = await makeApp({ ...ON, ...h.env });
    const stderr = spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(await count(await visit(t, "POST", "198.51.100.80"))).toBe(1);
      expect(await count(await visit(t, "POST", "198.51.100.80"))).toBe(1);
      await h.killRedis();
      const r = await visit(t, "POST", "198.51.100.80");
      expect(r.status).toBe(200);
      expect(await count(r)).toBe(2);
    } finally {
      stderr.mockRestore();
      await h.startRedis();
      await t.close();
    }
  });
});
