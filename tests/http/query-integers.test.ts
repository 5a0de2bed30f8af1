import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LogRecorder } from "../../src/usage/log/recorder";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

// Integer query parameters take plain decimal digits only. Elysia's coercion alone would read
// "0x10" as 16, "1e2" as 100, "0b11" as 3, and " 10", "+10" or "10.0" as 10.
const NOT_DECIMAL = ["0x10", "1e2", "0b11", "0o7", "%2010", "10.0", "%2B10", "1_0", "Infinity"];

const ROUTES = [
  { path: "/v1/catalog?", field: "limit", ok: "20" },
  { path: "/v1/catalog?", field: "offset", ok: "007" },
  { path: "/v1/search?q=git&", field: "limit", ok: "5" },
  { path: "/v1/png/github?", field: "size", ok: "64" },
  { path: "/v1/webp/github?", field: "size", ok: "64" },
];

describe("integer query parameters are plain decimal integers", () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await makeApp();
    key = await t.key("pro");
  });
  afterAll(() => t.close());

  for (const r of ROUTES) {
    test(`${r.path}${r.field}=...`, async () => {
      for (const value of NOT_DECIMAL) {
        const res = await t.get(`${r.path}${r.field}=${value}`, key);
        expect(res.status).toBe(422);
        const body = await res.json();
        expect(body.error).toBe("validation_error");
        expect(body.message).toContain(`Invalid query parameter ${r.field}`);
      }
      const ok = await t.get(`${r.path}${r.field}=${r.ok}`, key);
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
    });
  }

  test("the catalog page reads them as the numbers they spell", async () => {
    const body = await (await t.get("/v1/catalog?limit=020&offset=007", key)).json();
    expect(body).toMatchObject({ limit: 20, offset: 7 });
  });

  test("credentials are still checked first: no key is 401, not 422", async () => {
    for (const r of ROUTES) {
      const res = await t.req(`${r.path}${r.field}=0x10`);
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("invalid_api_key");
    }
  });

  test("a refused value consumes no quota and logs no usage event", async () => {
    const free = await t.key("free");
    const recorded = () => (t.deps.usage as LogRecorder).stats().recorded;
    const before = recorded();
    for (const value of NOT_DECIMAL.slice(0, 3)) {
      await expectError(await t.get(`/v1/png/github?size=${value}`, free), 422, "validation_error");
      await expectError(
        await t.get(`/v1/search?q=git&limit=${value}`, free),
        422,
        "validation_error",
      );
    }
    const usage = await (await t.get("/v1/usage", free)).json();
    expect(usage.endpoints.png.used).toBe(0);
    expect(usage.endpoints.search.used).toBe(0);
    expect(recorded()).toBe(before);
  });
});
