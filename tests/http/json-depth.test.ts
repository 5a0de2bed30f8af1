import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../src/http/body-limits";
import { ADMIN_TOKEN, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

/** JSON request bodies nested deeper than MAX_JSON_DEPTH: a 422 in the error shape, never 500. */
const nested = (levels: number, inner = "1") => "[".repeat(levels) + inner + "]".repeat(levels);
const DEEP = nested(5000);

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(() => t.close());

async function expectTooDeep(r: Response) {
  expect(r.status).toBe(422);
  const body = (await r.json()) as { error: string; message: string };
  expect(body).toEqual({
    error: "validation_error",
    message: expect.stringMatching(/deeper than 32/),
  });
}

const json = (headers: Record<string, string> = {}) => ({
  "content-type": "application/json",
  ...headers,
});

describe("nestsDeeperThan", () => {
  test("counts arrays and objects, not brackets inside strings", () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true);
    expect(nestsDeeperThan(`["${"[".repeat(100)}"]`, 1)).toBe(false);
    // an escaped quote does not end the string
    expect(nestsDeeperThan(`["\\"[[[["]`, 1)).toBe(false);
    // siblings do not add up
    expect(nestsDeeperThan("[[1],[2],[3],[4]]", 2)).toBe(false);
  });
});

describe("POST /v1/catalog/batch", () => {
  test("a 5,000-level nested body: 422 validation_error, not 500", async () => {
    await expectTooDeep(await t.post("/v1/catalog/batch", key, `{"slugs":${DEEP}}`));
    await expectTooDeep(await t.post("/v1/catalog/batch", key, DEEP));
  });

  test("deep nesting in an unknown field is refused too (it never reaches the schema)", async () => {
    await expectTooDeep(
      await t.post("/v1/catalog/batch", key, `{"slugs":["github"],"x":${nested(40)}}`),
    );
  });

  test(`nesting up to ${MAX_JSON_DEPTH} levels reaches validation as before`, async () => {
    const ok = await t.post(
      "/v1/catalog/batch",
      key,
      `{"slugs":["github"],"x":${nested(MAX_JSON_DEPTH - 1)}}`,
    );
    expect(ok.status).toBe(200);
    const bad = await t.post("/v1/catalog/batch", key, `{"slugs":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { message: string }).message).toMatch(/slugs/);
  });

  test("without a key the answer is still 401 (credentials come first)", async () => {
    const r = await t.post("/v1/catalog/batch", "not-a-key", DEEP);
    await expectError(r, 401, "invalid_api_key");
  });

  test("a deep chunked body (no Content-Length) is refused the same way", async () => {
    const bytes = new TextEncoder().encode(`{"slugs":${DEEP}}`);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 4000));
        c.enqueue(bytes.subarray(4000));
        c.close();
      },
    });
    const r = await t.req("/v1/catalog/batch", {
      method: "POST",
      headers: json({ "x-api-key": key }),
      body,
      duplex: "half",
    } as RequestInit);
    await expectTooDeep(r);
  });
});

describe("every other JSON route", () => {
  test.each([
    ["/auth/register", `{"email":${DEEP},"password":"x"}`],
    ["/auth/login", `{"email":"a@example.com","password":${DEEP}}`],
    ["/auth/refresh", `{"refreshToken":${DEEP}}`],
    ["/auth/logout", `{"refreshToken":${DEEP}}`],
    ["/auth/verify-email", `{"token":${DEEP}}`],
    ["/auth/resend-verification", `{"email":${DEEP}}`],
    ["/auth/forgot-password", `{"email":${DEEP}}`],
    ["/auth/reset-password", `{"token":${DEEP}}`],
  ])("%s: 422", async (path, body) => {
    await expectTooDeep(await t.req(path, { method: "POST", headers: json(), body }));
  });

  test("a bearer route checks the token before the body: 401 without one", async () => {
    const r = await t.req("/auth/me", { method: "DELETE", headers: json(), body: DEEP });
    await expectError(r, 401, "invalid_api_key");
  });

  test("POST /admin/keys: 422 with the operator token, 401 without", async () => {
    const body = `{"tier":"free","limits":${DEEP}}`;
    await expectTooDeep(
      await t.req("/admin/keys", {
        method: "POST",
        headers: json({ authorization: `Bearer ${ADMIN_TOKEN}` }),
        body,
      }),
    );
    const r = await t.req("/admin/keys", { method: "POST", headers: json(), body });
    await expectError(r, 401, "unauthorized");
  });

  test("POST /v1/billing/checkout: 422", async () => {
    await expectTooDeep(
      await t.req("/v1/billing/checkout", {
        method: "POST",
        headers: json({ "x-api-key": key }),
        body: `{"plan":${DEEP}}`,
      }),
    );
  });

  test("POST /mcp (JSON-RPC, read by the MCP transport): a protocol error, never 500", async () => {
    for (const body of [
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${DEEP}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_brand","arguments":{"slug":${DEEP}}}}`,
    ]) {
      const r = await t.req("/mcp", {
        method: "POST",
        headers: json({ "x-api-key": key, accept: "application/json, text/event-stream" }),
        body,
      });
      expect(r.status).toBeLessThan(500);
      expect(await r.json()).toHaveProperty("jsonrpc", "2.0");
    }
  });
});
