/**
 * Readiness means full speed: the real service (`bun src/main.ts`) on the whole built catalog,
 * its first search, slug, domain and SVG requests timed right after its first 200 from /readyz.
 * An index built on first use would show here as a first request of over a second. Bar: every
 * first request < 400 ms (generous for a shared 2-core machine); the test
 * (tests/catalog/readiness.test.ts) checks the answers, this checks the time.
 *
 *   bun scripts/bench/ready.ts     (CATALOG_FILE overrides the catalog)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../lib/net";

const ROOT = join(import.meta.dir, "../..");
const ADMIN_TOKEN = "bench-admin-token-0123456789";
const dir = mkdtempSync(join(tmpdir(), "bench-ready-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const proc = Bun.spawn([process.execPath, "--max-http-header-size=131072", "src/main.ts"], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dir,
    ADMIN_TOKEN,
    LOG_LEVEL: "error",
    CATALOG_FILE: process.env.CATALOG_FILE ?? join(ROOT, "build/catalog.json"),
  },
  stdout: "ignore",
  stderr: "inherit",
});

async function timed(url: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await fetch(url, { headers });
  await r.arrayBuffer();
  return { url, status: r.status, ms: performance.now() - t0 };
}

try {
  const started = performance.now();
  for (;;) {
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (performance.now() - started > 120_000) throw new Error("not ready after 120 s");
    await Bun.sleep(20);
  }
  const readyMs = performance.now() - started;
  const key = await fetch(`${base}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier: "pro" }),
  }).then((r) => r.json() as Promise<{ apiKey: string }>);
  const h = { "x-api-key": key.apiKey };
  const first = [
    await timed(`${base}/v1/search?q=gihtub`, h),
    await timed(`${base}/v1/search?q=google%20drive`, h),
    await timed(`${base}/v1/catalog/stripe`, h),
    await timed(`${base}/v1/brand?domain=mail.google.com`, h),
    await timed(`${base}/v1/svg/github?variant=mono`, h),
  ];
  const bad = first.filter((r) => r.status !== 200);
  if (bad.length) throw new Error(`not 200: ${bad.map((r) => `${r.url} ${r.status}`).join(", ")}`);
  const worst = Math.max(...first.map((r) => r.ms));
  console.log(
    `ready: /readyz 200 after ${Math.round(readyMs)} ms; first requests ${first
      .map((r) => `${new URL(r.url).pathname} ${r.ms.toFixed(1)} ms`)
      .join(
        ", ",
      )}; slowest ${worst.toFixed(1)} ms (bar: < 400 ms: ${worst < 400 ? "MET" : "MISSED"})`,
  );
} finally {
  proc.kill();
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
