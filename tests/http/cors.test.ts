import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { OriginList } from "../../src/http/cors";
import { makeApp, type TestApp } from "../support/app";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

const EXPOSED = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "X-Svg-Variant",
  "X-Asset-Provenance",
  "X-Variant-Restricted",
  "ETag",
  "X-Request-Id",
];

const preflight = (t: TestApp, path: string, origin: string, method = "GET") =>
  t.req(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "x-api-key, content-type",
    },
  });

const usedToday = async (t: TestApp, key: string) =>
  (
    (await (await t.get("/v1/usage", key)).json()) as {
      endpoints: Record<string, { used: number }>;
    }
  ).endpoints;

describe("CORS with the default CORS_ORIGINS=*", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  test("responses allow any origin and expose the rate-limit, variant, ETag and request-id headers", async () => {
    const key = await t.key("free");
    for (const path of ["/v1/catalog/github", "/v1/svg/github", "/v1/catalog/nope-nope-nope"]) {
      const res = await t.get(path, key, { origin: "https://app.example" });
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const exposed = res.headers.get("access-control-expose-headers")?.split(/,\s*/) ?? [];
      expect(exposed.sort()).toEqual([...EXPOSED].sort());
    }
    // errors too, so a browser can read a 401 or a 429's Retry-After
    const denied = await t.get("/v1/catalog/github", "bak_wrong", {
      origin: "https://app.example",
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a preflight is 204 with the allowed methods and headers, and touches no quota", async () => {
    const key = await t.key("free");
    for (const path of [
      "/v1/svg/github",
      "/v1/catalog/github",
      "/v1/search",
      "/v1/catalog/batch",
    ]) {
      const res = await preflight(t, path, "https://app.example", "POST");
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const allowed = res.headers.get("access-control-allow-headers")?.toLowerCase() ?? "";
      for (const h of ["x-api-key", "authorization", "content-type"]) expect(allowed).toContain(h);
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
      expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    }
    const used = await usedToday(t, key);
    expect(Object.values(used).map((b) => b.used)).toEqual(Object.values(used).map(() => 0));
    // a real request afterwards counts as usual
    await t.get("/v1/svg/github", key, { origin: "https://app.example" });
    expect((await usedToday(t, key)).svg?.used).toBe(1);
  });

  test("a preflight needs no key: no 401 before the browser may send one", async () => {
    const res = await preflight(t, "/v1/usage", "https://app.example");
    expect(res.status).toBe(204);
  });
});

describe("CORS with an allow-list", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ CORS_ORIGINS: "https://app.example, http://localhost:5173" });
  });
  afterAll(() => t.close());

  test("an origin on the list is echoed, with Vary: Origin", async () => {
    const key = await t.key("free");
    const res = await t.get("/v1/catalog/github", key, { origin: "http://localhost:5173" });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(res.headers.get("vary")).toContain("Origin");
    // the SVG route's own Vary (X-API-Key) keeps Origin: a shared cache must not serve one
    // origin's answer to another
    const svg = await t.get("/v1/svg/github", key, { origin: "http://localhost:5173" });
    expect(svg.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(svg.headers.get("vary")?.split(/,\s*/).sort()).toEqual(["Origin", "X-API-Key"]);
    const pre = await preflight(t, "/v1/catalog/github", "https://app.example");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  test("any other origin gets no CORS headers, so the browser refuses to share the answer", async () => {
    const key = await t.key("free");
    const res = await t.get("/v1/catalog/github", key, { origin: "https://evil.example" });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
    expect(res.headers.get("vary")).toContain("Origin");
    const pre = await preflight(t, "/v1/catalog/github", "https://evil.example");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-headers")).toBeNull();
  });
});

describe("CORS_ORIGINS configuration", () => {
  test("* or a comma-separated list of http(s) origins; anything else stops start-up", () => {
    expect(loadConfig({}).CORS_ORIGINS).toBe("*");
    expect(
      loadConfig({ CORS_ORIGINS: "https://a.example,http://localhost:3001" }).CORS_ORIGINS,
    ).toBe("https://a.example,http://localhost:3001");
    for (const bad of ["a.example", "https://a.example/path", "*,https://a.example", "ftp://x"])
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/^CORS_ORIGINS: /);
  });
});

describe("cors: one origin list", () => {
  test("origins compare case-insensitively and without a trailing slash", () => {
    const list = new OriginList(" https://A.example/ , http://localhost:5173");
    expect(list.any).toBe(false);
    expect(list.allow("https://a.example")).toBe("https://a.example");
    expect(list.allow("HTTPS://A.EXAMPLE")).toBe("HTTPS://A.EXAMPLE");
    expect(list.allow("http://localhost:5173")).toBe("http://localhost:5173");
    expect(list.allow("https://b.example")).toBeNull();
    expect(list.allow(null)).toBeNull();
    expect(new OriginList("*").allow("https://any.example")).toBe("*");
  });
});
