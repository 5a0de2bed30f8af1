import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { makeApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

describe("health", () => {
  test("/healthz answers while the process is up", async () => {
    const res = await t.req("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("/readyz reports the loaded catalog and the store", async () => {
    const res = await t.req("/readyz");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("ready");
    expect(body.catalog.brands).toBe(t.deps.catalog.size);
    expect(body.store).toEqual({ kind: "embedded", reachable: true });
  });

  test("/readyz is 503 when the store does not answer", async () => {
    const down = await makeApp(
      {},
      {
        customize: (d) => {
          d.store.ping = async () => false;
        },
      },
    );
    try {
      const res = await down.req("/readyz");
      expect(res.status).toBe(503);
      expect((await res.json()).status).toBe("not_ready");
    } finally {
      await down.close();
    }
  });
});

describe("errors", () => {
  test("unknown route is 404 not_found in the error shape", async () => {
    const res = await t.req("/v2/whatever");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not_found", message: expect.any(String) });
  });

  test("an unexpected failure is 500 internal_error with no internals", async () => {
    const broken = await makeApp(
      {},
      {
        customize: (d) => {
          d.catalog.viewJson = () => {
            throw new Error("secret internal detail at /srv/app.ts:12");
          };
        },
      },
    );
    const logs = captureLogs();
    try {
      const key = await broken.key("free");
      const res = await broken.get("/v1/catalog/github", key);
      expect(res.status).toBe(500);
      // the operator gets the details in the log, the caller none
      expect(logs.lines).toEqual([
        expect.objectContaining({
          level: "error",
          msg: "unhandled error",
          error: "secret internal detail at /srv/app.ts:12",
          requestId: res.headers.get("x-request-id"),
        }),
      ]);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: "internal_error",
        message: "Internal server error",
      });
      expect(text).not.toContain("secret");
      expect(text).not.toContain(".ts");
    } finally {
      logs.restore();
      await broken.close();
    }
  });

  test("every response carries nosniff and a request id", async () => {
    const res = await t.req("/healthz", { headers: { "x-request-id": "abc-123" } });
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-request-id")).toBe("abc-123");
    const other = await t.req("/healthz", { headers: { "x-request-id": "<script>" } });
    expect(other.headers.get("x-request-id")).not.toBe("<script>");
  });
});

describe("OpenAPI", () => {
  test("documents every route with request, response and error schemas", async () => {
    const res = await t.req("/swagger/json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    const paths = doc.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >;
    expect(paths["/v1/catalog/"] ?? paths["/v1/catalog"]).toBeDefined();
    const bySlug = paths["/v1/catalog/{slug}"]?.get;
    expect(Object.keys(bySlug?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "404", "422", "429"]),
    );
    const batch = paths["/v1/catalog/batch"]?.post as unknown as {
      requestBody: unknown;
      responses: Record<string, unknown>;
    };
    expect(batch.requestBody).toBeDefined();
    expect(Object.keys(batch.responses)).toEqual(expect.arrayContaining(["200", "401", "422"]));
    expect(doc.components.securitySchemes.apiKey).toEqual({
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
    });
  });

  test("Swagger UI is served at /swagger", async () => {
    const res = await t.req("/swagger");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
  });
});
