import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { ADMIN_TOKEN, makeApp, type TestApp } from "../support/app";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const admin = (path: string, method: string, body?: unknown) =>
  t.req(path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Calls `n` times; the last answers are the interesting ones (a cap reached). */
async function repeat(n: number, call: () => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await call()).status);
  return statuses;
}

describe("the OpenAPI document does not change with traffic", () => {
  test("byte-identical before and after every route has run, successes, errors and 429s", async () => {
    const before = await (await t.req("/swagger/json")).text();
    const doc = JSON.parse(before) as Json;
    const key = await t.key("free");
    const pro = await t.key("pro");
    const created = (await (await admin("/admin/keys", "POST", { tier: "free" })).json()) as Json;
    // free caps: catalog 100, svg/png/webp 50, search 30, domain 20, batch 5 per day
    expect(await repeat(101, () => t.get("/v1/catalog/github", key))).toContain(429);
    expect(await repeat(51, () => t.get("/v1/svg/github", key))).toContain(429);
    expect(await repeat(51, () => t.get("/v1/png/github?size=32", key))).toContain(429);
    expect(await repeat(51, () => t.get("/v1/webp/github?size=32", key))).toContain(429);
    expect(await repeat(31, () => t.get("/v1/search?q=git", key))).toContain(429);
    expect(await repeat(21, () => t.get("/v1/brand?domain=github.com", key))).toContain(429);
    expect(
      await repeat(6, () => t.post("/v1/catalog/batch", key, { slugs: ["github"] })),
    ).toContain(429);
    expect(await repeat(61, () => t.get("/v1/usage", key))).toContain(429);
    expect(await repeat(61, () => t.get("/v1/analytics/usage", key))).toContain(429);
    await t.get("/v1/catalog?limit=2", pro);
    await t.get("/v1/catalog?limit=0", pro);
    await t.get("/v1/catalog/no-such-brand-here", pro);
    await t.post("/v1/catalog/batch", pro, { slugs: ["github", "nope-nope"], extra: 1 });
    await t.post("/v1/catalog/batch", pro, "{not json");
    await t.get("/v1/svg/github?variant=color", pro);
    await t.get("/v1/search?q=g", pro);
    await t.get("/v1/brand?email=someone@gmail.com", pro);
    await t.get("/v1/brand?domain=no-such-brand-anywhere.example", pro);
    await t.get("/v1/catalog/github", "bak_wrong");
    await t.req("/healthz");
    await t.req("/readyz");
    await admin(`/admin/accounts/${created.accountId}`, "PATCH", { tier: "pro" });
    await admin("/admin/accounts/nobody", "PATCH", { tier: "pro" });
    await admin(`/admin/accounts/${created.accountId}/keys`, "POST");
    await admin("/admin/keys", "POST", { tier: "gold" });
    for (const [path, item] of Object.entries(doc.paths as Json))
      for (const method of Object.keys(item as Json))
        await t.req(path.replace(/\{[^}]+\}/g, "github"), { method: method.toUpperCase() });

    // every documented operation answered, and every response matched the document
    const ran = new Set(
      [...(t.checker?.seen ?? [])].map((s) => s.split(" ").slice(0, 2).join(" ")),
    );
    const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.filter((op) => !ran.has(op))).toEqual([]);
    const seen = [...(t.checker?.seen ?? [])];
    expect(seen.filter((s) => s.endsWith(" 429")).length).toBeGreaterThanOrEqual(9);

    const after = await (await t.req("/swagger/json")).text();
    expect(after).toBe(before);
  });

  test("schemas carry no Elysia-only keywords and never claim extra fields are refused", async () => {
    const text = await (await t.req("/swagger/json")).text();
    expect(text).not.toContain('"additionalProperties":false');
    const doc = JSON.parse(text) as Json;
    // `error` is a property name in error bodies; as a schema keyword it must be gone
    const keywords: string[] = [];
    const walk = (node: unknown, names: boolean, at: string) => {
      if (typeof node !== "object" || node === null) return;
      for (const [k, v] of Object.entries(node)) {
        if (!names && k === "error" && typeof v === "string") keywords.push(at);
        walk(v, !names && k === "properties", `${at}.${k}`);
      }
    };
    walk(doc, false, "$");
    expect(keywords).toEqual([]);
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
  });
});

describe("API reference UI", () => {
  const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

  test("/swagger and /swagger/ serve Swagger UI from this server only, no CDN", async () => {
    for (const path of ["/swagger", "/swagger/"]) {
      const res = await t.req(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await res.text();
      const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(refs.sort()).toEqual([
        "/",
        "/swagger/favicon-32x32.png",
        "/swagger/init.js",
        "/swagger/reference.css",
        "/swagger/swagger-ui-bundle.js",
        "/swagger/swagger-ui.css",
      ]);
      expect(html).not.toMatch(/https?:\/\//);
    }
  });

  test("the UI files are the installed swagger-ui-dist package's, byte for byte", async () => {
    for (const name of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
      const res = await t.req(`/swagger/${name}`);
      expect(res.status).toBe(200);
      const served = new Uint8Array(await res.arrayBuffer());
      expect(Buffer.compare(served, readFileSync(join(dist, name)))).toBe(0);
    }
    const init = await (await t.req("/swagger/init.js")).text();
    expect(init).toContain('fetch("/swagger/json")');
    const css = await t.req("/swagger/reference.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain("prefers-color-scheme: dark");
  });

  test("other names under /swagger are 404, never files from elsewhere", async () => {
    for (const path of [
      "/swagger/package.json",
      "/swagger/index.html",
      "/swagger/..%2Fpackage.json",
    ]) {
      const res = await t.req(path);
      expect(res.status).toBe(404);
      expect(((await res.json()) as Json).error).toBe("not_found");
    }
  });
});
