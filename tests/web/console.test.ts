import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "bun";
import { buildWeb, isStale, WEB_OUT } from "../../scripts/build-web";
import { CONSOLE_CSP, CONSOLE_PAGES } from "../../src/web";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

let t: TestApp;
beforeAll(async () => {
  if (isStale()) await buildWeb();
  t = await makeApp();
});
afterAll(() => t.close());

const scriptOf = (html: string) => /src="(\/console\/[^"]+\.js)"/.exec(html)?.[1] as string;
const styleOf = (html: string) => /href="(\/console\/[^"]+\.css)"/.exec(html)?.[1] as string;

describe("web console: build output", () => {
  test("the console's JavaScript is at most 100 KB gzipped in total", () => {
    const js = readdirSync(WEB_OUT).filter((n) => n.endsWith(".js"));
    expect(js.length).toBeGreaterThan(0);
    const gz = js.reduce((s, n) => s + gzipSync(readFileSync(join(WEB_OUT, n))).length, 0);
    console.log(`console JS: ${js.length} file(s), ${(gz / 1024).toFixed(1)} KB gzipped`);
    expect(gz).toBeLessThanOrEqual(100 * 1024);
  });

  test("the bundle carries Preact and uPlot from node_modules and loads nothing remote", () => {
    const html = readFileSync(join(WEB_OUT, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const js = readFileSync(join(WEB_OUT, scriptOf(html).slice("/console/".length)), "utf8");
    expect(js).toContain("uplot"); // uPlot's class names
    expect(js).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)\./);
  });
});

describe("web console: served by the app", () => {
  test("every page path answers the same HTML with the CSP and no-cache", async () => {
    for (const path of CONSOLE_PAGES) {
      const r = await t.req(path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(r.headers.get("cache-control")).toBe("no-cache");
      expect(r.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(await r.text()).toContain('<div id="app">');
    }
    const csp = CONSOLE_CSP;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain("unsafe-inline");
  });

  test("the hashed bundles have their content types, a year's immutable cache and ETags", async () => {
    const html = await (await t.req("/")).text();
    for (const [path, type] of [
      [scriptOf(html), "text/javascript; charset=utf-8"],
      [styleOf(html), "text/css; charset=utf-8"],
    ] as const) {
      const r = await t.req(path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe(type);
      expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const etag = r.headers.get("etag") as string;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await t.req(path, { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
    }
  });

  test("unknown console files and API routes keep the JSON 404", async () => {
    for (const path of [
      "/console/nope.js",
      "/console/index.html",
      "/v1/nope",
      "/auth/nope",
      "/nope",
      "/admin",
    ]) {
      const r = await t.req(path);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toContain("application/json");
      expect(((await r.json()) as { error: string }).error).toBe("not_found");
    }
  });

  test("the API routes next to the console are not shadowed", async () => {
    expect((await t.req("/healthz")).status).toBe(200);
    expect((await t.req("/swagger/json")).headers.get("content-type")).toContain(
      "application/json",
    );
    await expectError(await t.req("/v1/catalog"), 401, "invalid_api_key");
    const key = await t.key();
    const r = await t.get("/v1/catalog/stripe", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
  });

  test("GET /verify-email?token=… only serves the page: the token is still unused", async () => {
    const reg = await t.req("/auth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "getonly@example.com", password: "correct horse battery" }),
    });
    expect(reg.status).toBe(201);
    const dir = join(t.deps.config.DATA_DIR, "outbox");
    const mail = readdirSync(dir).map((n) =>
      readFileSync(join(dir, n), "utf8")
        .replace(/=\r?\n/g, "")
        .replace(/=3D/g, "="),
    );
    const token = decodeURIComponent(
      /verify-email\?token=([A-Za-z0-9_%-]+)/.exec(mail.join("\n"))?.[1] as string,
    );
    const page = await t.req(`/verify-email?token=${encodeURIComponent(token)}`);
    expect(page.status).toBe(200);
    const post = await t.req("/auth/verify-email", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    expect(post.status).toBe(200);
  });
});
