/**
 * Start-up of the real service and readiness at full speed: the service (`bun src/main.ts`,
 * embedded store) on the whole built catalog, started `--starts` times in a fresh DATA_DIR: the
 * time from spawn to its first 200 from /readyz (bar: < 2 s), then its first search, slug,
 * domain and SVG requests timed right after it. An index built on first use would show here as
 * a first request of over a second. Bar: every first request < 400 ms (generous for a shared
 * 2-core machine); the test (tests/catalog/readiness.test.ts) checks the answers, this checks
 * the time.
 *
 *   bun scripts/bench/ready.ts [--starts 3]    (CATALOG_FILE overrides the catalog)
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../lib/net";
import { removeTempDir, tempDir } from "./servers";

const { values } = parseArgs({ options: { starts: { type: "string", default: "3" } } });
const ROOT = join(import.meta.dir, "../..");
const ADMIN_TOKEN = "bench-admin-token-0123456789";

async function timed(url: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await fetch(url, { headers });
  await r.arrayBuffer();
  return { url, status: r.status, ms: performance.now() - t0 };
}

async function start() {
  const dir = tempDir("bench-ready-");
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
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
  try {
    for (;;) {
      const ok = await fetch(`${base}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 120_000) throw new Error("not ready after 120 s");
      await Bun.sleep(10);
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
    if (bad.length)
      throw new Error(`not 200: ${bad.map((r) => `${r.url} ${r.status}`).join(", ")}`);
    const worst = Math.max(...first.map((r) => r.ms));
    console.log(
      `ready: /readyz 200 after ${Math.round(readyMs)} ms (bar: < 2000 ms: ${readyMs < 2000 ? "MET" : "MISSED"}); first requests ${first
        .map((r) => `${new URL(r.url).pathname} ${r.ms.toFixed(1)} ms`)
        .join(
          ", ",
        )}; slowest ${worst.toFixed(1)} ms (bar: < 400 ms: ${worst < 400 ? "MET" : "MISSED"})`,
    );
  } finally {
    proc.kill();
    await proc.exited;
    removeTempDir(dir);
  }
}

for (let i = 0; i < Number(values.starts); i++) await start();
