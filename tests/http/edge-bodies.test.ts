import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RUNTIME_BODY_LIMIT } from "../../src/http/body-limits";
import { makeApp, type TestApp } from "../support/app";

/**
 * Bodies sent without Content-Length (chunked) to a route with a JSON body, over a real
 * listening server configured as src/main.ts is: a JSON 413 past 64 KiB, not the runtime's
 * empty one.
 */
let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let key: string;
beforeAll(async () => {
  t = await makeApp();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    maxRequestBodySize: RUNTIME_BODY_LIMIT,
    fetch: t.app.fetch,
  });
  key = await t.key("pro");
});
afterAll(async () => {
  server.stop(true);
  await t.close();
});

function chunked(text: string, pieces = 8): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const step = Math.ceil(bytes.length / pieces);
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += step) c.enqueue(bytes.subarray(i, i + step));
      c.close();
    },
  });
}

const post = (body: ReadableStream<Uint8Array>) =>
  fetch(`http://127.0.0.1:${server.port}/v1/catalog/batch`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);

describe("chunked request bodies", () => {
  test("a 3 MB chunked body: 413 payload_too_large with {error, message}", async () => {
    const r = await post(chunked(JSON.stringify({ slugs: ["x".repeat(3 * 1024 * 1024)] }), 30));
    expect(r.status).toBe(413);
    const body = (await r.json()) as { error: string; message: string };
    expect(body.error).toBe("payload_too_large");
    expect(body.message).toMatch(/65536 bytes/);
  });

  test("a small chunked body is read and served as usual", async () => {
    const r = await post(chunked(JSON.stringify({ slugs: ["github", "nope-not-a-brand"] })));
    expect(r.status).toBe(200);
    const body = (await r.json()) as { notFound: string[] };
    expect(body.notFound).toEqual(["nope-not-a-brand"]);
  });

  test("chunked malformed JSON: 422 validation_error", async () => {
    const r = await post(chunked('{"slugs": ['));
    expect(r.status).toBe(422);
    expect(((await r.json()) as { error: string }).error).toBe("validation_error");
  });
});

describe("chunked request bodies on the public /auth routes", () => {
  const postAuth = (path: string, body: ReadableStream<Uint8Array>) =>
    fetch(`http://127.0.0.1:${server.port}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);

  test("a 3 MB chunked login body: 413 payload_too_large, not read to the end", async () => {
    const big = JSON.stringify({ email: "a@example.com", password: "p".repeat(3 * 1024 * 1024) });
    const r = await postAuth("/auth/login", chunked(big, 30));
    expect(r.status).toBe(413);
    expect(((await r.json()) as { error: string }).error).toBe("payload_too_large");
  });

  test("a small chunked login body is parsed as usual (401 invalid_credentials)", async () => {
    const body = JSON.stringify({ email: "nobody@example.com", password: "wrong password 123" });
    const r = await postAuth("/auth/login", chunked(body));
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_credentials");
  });
});
