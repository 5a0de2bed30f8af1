import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Server } from "bun";
import type { Browser } from "playwright-core";
import { makeApp, type TestApp } from "../support/app";
import { CHROMIUM, launchChromium } from "../support/chromium";
import { describeIf, NO_CHROMIUM } from "../support/skip";

/**
 * Real headless Chromium (Debian's `chromium` package, driven by playwright-core: no browser
 * download) against the real app listening on a socket. Pages are served from two other
 * origins: one on CORS_ORIGINS, one not.
 */
const available = existsSync(CHROMIUM);
if (!available)
  console.warn(`skipping browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

let t: TestApp;
let api: Server<undefined>;
let allowedPage: Server<undefined>;
let otherPage: Server<undefined>;
let browser: Browser;
let apiBase: string;

const page = () =>
  new Response("<!doctype html><title>client</title><p>client page</p>", {
    headers: { "content-type": "text/html" },
  });

beforeAll(async () => {
  if (!available) return;
  allowedPage = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: page });
  otherPage = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: page });
  t = await makeApp({ CORS_ORIGINS: `http://127.0.0.1:${allowedPage.port}` });
  api = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
  // "localhost" and "127.0.0.1" are different origins: the API is cross-origin to both pages
  apiBase = `http://localhost:${api.port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  api?.stop(true);
  allowedPage?.stop(true);
  otherPage?.stop(true);
  await t?.close();
});

/** What a page's script gets from fetching the API with X-API-Key. */
interface Fetched {
  json?: {
    status: number;
    name: string;
    limit: string | null;
    remaining: string | null;
    requestId: string | null;
  };
  svg?: {
    status: number;
    starts: string;
    variant: string | null;
    etag: string | null;
    limit: string | null;
  };
  error?: string;
}

async function fetchFrom(origin: string, key: string): Promise<Fetched> {
  const tab = await browser.newPage();
  try {
    await tab.goto(origin);
    return await tab.evaluate(
      async ({ apiBase, key }) => {
        try {
          const headers = { "X-API-Key": key };
          const r = await fetch(`${apiBase}/v1/catalog/github`, { headers });
          const body = await r.json();
          const s = await fetch(`${apiBase}/v1/svg/github`, { headers });
          const svg = await s.text();
          return {
            json: {
              status: r.status,
              name: body.name,
              limit: r.headers.get("X-RateLimit-Limit"),
              remaining: r.headers.get("X-RateLimit-Remaining"),
              requestId: r.headers.get("X-Request-Id"),
            },
            svg: {
              status: s.status,
              starts: svg.slice(0, 4),
              variant: s.headers.get("X-Svg-Variant"),
              etag: s.headers.get("ETag"),
              limit: s.headers.get("X-RateLimit-Limit"),
            },
          };
        } catch (err) {
          return { error: String(err) };
        }
      },
      { apiBase, key },
    );
  } finally {
    await tab.close();
  }
}

/** Chromium pages on a shared 2-core machine: well over bun's 5 s default per test. */
const SLOW = 60_000;

describeIf(available, NO_CHROMIUM)("CORS in headless Chromium", () => {
  test(
    "a page on an allowed origin fetches JSON and an SVG with X-API-Key and reads the headers",
    async () => {
      const key = await t.key("free");
      const got = await fetchFrom(`http://127.0.0.1:${allowedPage.port}/`, key);
      expect(got.error).toBeUndefined();
      expect(got.json).toEqual({
        status: 200,
        name: "GitHub",
        limit: "100",
        remaining: "99",
        requestId: expect.stringMatching(/^[A-Za-z0-9._-]+$/),
      });
      expect(got.svg).toEqual({
        status: 200,
        starts: "<svg",
        variant: "mono",
        etag: expect.stringMatching(/^(W\/)?"/),
        limit: "50",
      });
    },
    SLOW,
  );

  test(
    "a page on another origin is refused by the browser",
    async () => {
      const key = await t.key("free");
      const got = await fetchFrom(`http://127.0.0.1:${otherPage.port}/`, key);
      expect(got.json).toBeUndefined();
      expect(got.error).toContain("TypeError");
    },
    SLOW,
  );

  test(
    "the API reference renders from this server alone, no network beyond it",
    async () => {
      const tab = await browser.newPage();
      const elsewhere: string[] = [];
      await tab.route("**/*", (route) => {
        const url = new URL(route.request().url());
        if (url.host === `localhost:${api.port}`) return route.continue();
        elsewhere.push(url.href);
        return route.abort();
      });
      try {
        await tab.goto(`${apiBase}/swagger/`);
        await tab.waitForSelector(".swagger-ui .info .title", { timeout: 45_000 });
        expect(await tab.textContent(".swagger-ui .info .title")).toContain("Brand Asset API");
        await tab.waitForSelector(".opblock-summary-path", { timeout: 45_000 });
        const paths = await tab.$$eval(".opblock-summary-path", (els) =>
          els.map((e) => e.getAttribute("data-path")),
        );
        expect(paths).toContain("/v1/catalog/{slug}");
        expect(elsewhere).toEqual([]);
      } finally {
        await tab.close();
      }
    },
    SLOW,
  );
});
