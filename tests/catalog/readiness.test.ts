/**
 * /readyz says ready only when every route can answer: the real service on the whole built
 * catalog (its database, opened read-only) answers its first search, slug, domain and SVG
 * requests right after the first 200 from /readyz. How fast those first answers come (no index
 * to build on the way) is a benchmark's bar, not a test's: scripts/bench/ready.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { CATALOG_FILE, tempDir } from "../support/app";
import { adminKey, type ServiceProcess, startService } from "../support/service";

let svc: ServiceProcess | null = null;
afterAll(() => {
  svc?.proc.kill();
});

async function get(url: string, headers: Record<string, string> = {}) {
  const r = await fetch(url, { headers });
  return { status: r.status, body: await r.text() };
}

describe("readiness on the whole catalog", () => {
  test("ready means the first requests of every kind answer at once", async () => {
    svc = await startService({ dataDir: tempDir(), env: { CATALOG_FILE } });
    const ready = await get(`${svc.base}/readyz`);
    expect(ready.status).toBe(200);
    const state = JSON.parse(ready.body) as { catalog: { loaded: boolean; brands: number } };
    expect(state.catalog.loaded).toBe(true);
    expect(state.catalog.brands).toBeGreaterThan(20_000);
    const h = { "x-api-key": (await adminKey(svc.base, "pro")).apiKey };
    // the first search of the process: an index built on first use took over a second here
    const first = [
      await get(`${svc.base}/v1/search?q=gihtub`, h),
      await get(`${svc.base}/v1/search?q=google%20drive`, h),
      await get(`${svc.base}/v1/catalog/stripe`, h),
      await get(`${svc.base}/v1/brand?domain=mail.google.com`, h),
      await get(`${svc.base}/v1/svg/github?variant=mono`, h),
    ];
    for (const r of first) expect(r.status).toBe(200);
    expect(JSON.parse(first[0]?.body ?? "{}").matches[0].slug).toBe("github");
    expect(JSON.parse(first[1]?.body ?? "{}").matches[0].slug).toBe("googledrive");
    expect(JSON.parse(first[2]?.body ?? "{}").slug).toBe("stripe");
    expect(JSON.parse(first[3]?.body ?? "{}").slug).toBe("gmail");
    expect(first[4]?.body).toStartWith("<svg");
  }, 90_000);
});
