/**
 * /readyz says ready only when every route answers at full speed: the real service on the whole
 * built catalog (its database, opened read-only) answers its first search, slug, domain and SVG
 * requests right after the first 200 from /readyz, with no index to build on the way.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { CATALOG_FILE, tempDir } from "../support/app";
import { adminKey, type ServiceProcess, startService } from "../support/service";

let svc: ServiceProcess | null = null;
afterAll(() => {
  svc?.proc.kill();
});

async function timed(url: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await fetch(url, { headers });
  const body = await r.text();
  return { status: r.status, body, ms: performance.now() - t0 };
}

describe("readiness on the whole catalog", () => {
  test("ready means the first requests of every kind answer at once", async () => {
    svc = await startService({ dataDir: tempDir(), env: { CATALOG_FILE } });
    const ready = await timed(`${svc.base}/readyz`);
    expect(ready.status).toBe(200);
    const state = JSON.parse(ready.body) as { catalog: { loaded: boolean; brands: number } };
    expect(state.catalog.loaded).toBe(true);
    expect(state.catalog.brands).toBeGreaterThan(20_000);
    const h = { "x-api-key": (await adminKey(svc.base, "pro")).apiKey };
    // the first search of the process: an index built on first use took over a second here
    const first = [
      await timed(`${svc.base}/v1/search?q=gihtub`, h),
      await timed(`${svc.base}/v1/search?q=google%20drive`, h),
      await timed(`${svc.base}/v1/catalog/stripe`, h),
      await timed(`${svc.base}/v1/brand?domain=mail.google.com`, h),
      await timed(`${svc.base}/v1/svg/github?variant=mono`, h),
    ];
    for (const r of first) expect(r.status).toBe(200);
    expect(JSON.parse(first[0]?.body ?? "{}").matches[0].slug).toBe("github");
    // generous for a shared 2-core machine: a lazily built index would take over 1,000 ms
    expect(Math.max(...first.map((r) => r.ms))).toBeLessThan(400);
  }, 90_000);
});
