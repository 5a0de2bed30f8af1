import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  setDefaultTimeout,
  test,
} from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { makeApp, type TestApp } from "../support/app";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

/** Elysia writes the request line in its after-response hook (a setImmediate). */
const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

let capture: ReturnType<typeof captureLogs>;
afterEach(() => capture?.restore());
/** Request lines, without the one for the document the response checker reads first. */
const requestLines = () =>
  capture.lines.filter((l) => l.msg === "request" && l.route !== "/swagger/json");

/** The public key id inside a key: bak_<16 hex key id>_<secret>. */
const keyIdOf = (apiKey: string) => apiKey.split("_")[1];

describe("LOG_REQUESTS=all", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ LOG_REQUESTS: "all" });
  });
  afterAll(() => t.close());

  test("one JSON line per request: time, id, method, route pattern, status, duration, key id, IP", async () => {
    const key = await t.key("free");
    capture = captureLogs();
    const res = await t.get("/v1/catalog/github", key);
    await settle();
    const lines = requestLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: "info",
      msg: "request",
      requestId: res.headers.get("x-request-id"),
      method: "GET",
      route: "/v1/catalog/:slug",
      status: 200,
      ms: expect.any(Number),
      keyId: keyIdOf(key),
      ip: "unknown",
    });
    // the key itself, or its secret part, never reaches a log line
    const text = JSON.stringify(capture.lines);
    expect(text).not.toContain(key);
    // (the secret is base64url: it may hold "_" itself, so it is all that follows the key id)
    expect(text).not.toContain(key.split("_").slice(2).join("_"));
  });

  test("4xx lines are warn, without a key id when the key was not valid", async () => {
    capture = captureLogs();
    const res = await t.get(
      "/v1/svg/github",
      "bak_0123456789abcdef_notarealkeynotarealkeynotareal1",
    );
    await settle();
    expect(requestLines()).toEqual([
      expect.objectContaining({
        level: "warn",
        route: "/v1/svg/:slug",
        status: 401,
        keyId: null,
        requestId: res.headers.get("x-request-id"),
      }),
    ]);
    expect(JSON.stringify(capture.lines)).not.toContain("notarealkey");
  });

  test("an unknown route is logged with a null route pattern", async () => {
    capture = captureLogs();
    await t.req("/v2/nothing-here");
    await settle();
    expect(requestLines()).toEqual([
      expect.objectContaining({ method: "GET", route: null, status: 404 }),
    ]);
  });

  test("a caller's sane X-Request-Id is kept and logged; anything else is replaced", async () => {
    capture = captureLogs();
    const kept = await t.req("/healthz", { headers: { "x-request-id": "trace-42.a_b:c" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-42.a_b:c");
    for (const bad of ["<script>", "a b", "x".repeat(129), ""]) {
      const res = await t.req("/healthz", { headers: { "x-request-id": bad } });
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    await settle();
    const ids = requestLines().map((l) => l.requestId);
    expect(ids[0]).toBe("trace-42.a_b:c");
    expect(new Set(ids).size).toBe(5);
  });

  test("concurrent requests each log their own id", async () => {
    const key = await t.key("pro");
    capture = captureLogs();
    const slugs = ["github", "gitlab", "slack", "stripe", "figma", "notion"];
    const responses = await Promise.all(
      slugs.map((s) => t.get(`/v1/svg/${s}`, key, { "x-request-id": `req-${s}` })),
    );
    await settle();
    expect(responses.map((r) => r.headers.get("x-request-id"))).toEqual(
      slugs.map((s) => `req-${s}`),
    );
    expect(
      requestLines()
        .map((l) => l.requestId)
        .sort(),
    ).toEqual(slugs.map((s) => `req-${s}`).sort());
  });
});

describe("client IP in request lines follows TRUST_PROXY", () => {
  for (const [trust, expected] of [
    ["true", "203.0.113.9"],
    ["false", "unknown"],
  ] as const) {
    test(`TRUST_PROXY=${trust}`, async () => {
      const t = await makeApp({ LOG_REQUESTS: "all", TRUST_PROXY: trust });
      try {
        capture = captureLogs();
        await t.req("/healthz", { headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.9" } });
        await settle();
        expect(requestLines().map((l) => l.ip)).toEqual([expected]);
      } finally {
        await t.close();
      }
    });
  }
});

describe("LOG_REQUESTS=errors and off", () => {
  test("errors: only responses of 400 and above are logged", async () => {
    const t = await makeApp({ LOG_REQUESTS: "errors" });
    try {
      const key = await t.key("free");
      capture = captureLogs();
      await t.get("/v1/catalog/github", key);
      await t.get("/v1/catalog/no-such-slug-anywhere", key);
      await t.get("/v1/search?q=a", key);
      await settle();
      expect(requestLines().map((l) => [l.status, l.level])).toEqual([
        [404, "warn"],
        [422, "warn"],
      ]);
    } finally {
      await t.close();
    }
  });

  test("off: no request lines", async () => {
    const t = await makeApp({ LOG_REQUESTS: "off" });
    try {
      capture = captureLogs();
      await t.req("/healthz");
      await t.req("/v2/nothing");
      await settle();
      expect(requestLines()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("every log line of a request carries its id", () => {
  test("a 500: the unhandled-error line and the request line share the response's X-Request-Id", async () => {
    const t = await makeApp(
      { LOG_REQUESTS: "errors" },
      {
        customize: (d) => {
          d.catalog.viewJson = () => {
            throw new Error("boom in the catalog");
          };
        },
      },
    );
    try {
      const key = await t.key("free");
      capture = captureLogs();
      const res = await t.get("/v1/catalog/github", key, { "x-request-id": "support-123" });
      expect(res.status).toBe(500);
      expect(res.headers.get("x-request-id")).toBe("support-123");
      await settle();
      const errors = capture.lines.filter((l) => l.level === "error");
      expect(errors.map((l) => [l.msg, l.requestId])).toEqual([
        ["unhandled error", "support-123"],
        ["request", "support-123"],
      ]);
      expect(errors[1]).toMatchObject({ status: 500, route: "/v1/catalog/:slug" });
      // lines after the response (other requests, timers) do not claim the id
      capture.lines.length = 0;
      await t.req("/healthz");
      await settle();
      expect(capture.lines.every((l) => l.requestId !== "support-123")).toBe(true);
    } finally {
      await t.close();
    }
  });
});
