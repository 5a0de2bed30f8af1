#!/usr/bin/env bun
/**
 * GET /v1/catalog/{slug} with a valid key vs a bare Bun.serve returning the same JSON, same
 * run; plus cold start of the embedded default to a ready /readyz. Prints figures only.
 * Target: the app at >= 60% of the bare server's requests/s; cold start < 2 s.
 *   bun scripts/bench/catalog.ts [--duration 5] [--connections 32]
 */
import { join } from "node:path";
import { loadArgs } from "./args";
import { type LoadResult, load, loadGenerator } from "./load";
import { freePort, removeTempDir, startApp, startBare, tempDir } from "./servers";
import { fmt, fmtMedian, fmtRounds, roundRatios } from "./stats";

const { duration, connections } = loadArgs({ duration: 5, connections: 32 });
const ROOT = join(import.meta.dir, "../..");

async function coldStart(): Promise<number> {
  const dataDir = tempDir("bench-cold-");
  const port = await freePort();
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, "--max-http-header-size=131072", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "error" },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return performance.now() - started;
      } catch {}
      await Bun.sleep(10);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    removeTempDir(dataDir);
  }
}

const slugs = ["github", "stripe", "slack", "google", "apple", "microsoft", "openai", "figma"];
const app = await startApp({ tier: "internal" });
const sample = await fetch(`${app.url}/v1/catalog/github`, { headers: { "x-api-key": app.key } });
const body = await sample.text();
const bare = await startBare(body, { "content-type": "application/json" });

const paths = slugs.map((s) => `/v1/catalog/${s}`);
const headers = { "x-api-key": app.key };
// warm both servers up (JIT, caches)
await load({ url: app.url, paths, headers, duration: 1, connections });
await load({ url: bare.url, paths, duration: 1, connections });

// interleaved rounds, median of each: the shared machine's noise hits both sides alike
const appRuns: LoadResult[] = [];
const bareRuns: LoadResult[] = [];
const ROUNDS = 5;
for (let round = 0; round < ROUNDS; round++) {
  appRuns.push(await load({ url: app.url, paths, headers, duration, connections }));
  bareRuns.push(await load({ url: bare.url, paths, duration, connections }));
}
const median = (runs: LoadResult[]) =>
  [...runs].sort((x, y) => x.rps - y.rps)[Math.floor(runs.length / 2)] as LoadResult;
const a = median(appRuns);
const b = median(bareRuns);
await app.stop();
await bare.stop();

const colds: number[] = [];
for (let i = 0; i < 3; i++) colds.push(await coldStart());

console.log(
  `GET /v1/catalog/{slug}  (${loadGenerator()}, ${connections} connections, median of ${ROUNDS} interleaved ${duration}s rounds)`,
);
console.log(
  `  app : ${fmt(a.rps, 0)} req/s  p50 ${fmt(a.p50)} ms  p99 ${fmt(a.p99)} ms  non-2xx ${a.non2xx}`,
);
console.log(`  bare: ${fmt(b.rps, 0)} req/s  p50 ${fmt(b.p50)} ms  p99 ${fmt(b.p99)} ms`);
// the median of the per-round ratios: each app run paired with the bare run right after it
const ratios = roundRatios(appRuns, bareRuns);
console.log(
  `  ratio app/bare: ${`${fmtMedian(ratios)} (reference: bare-server targets withdrawn)`}; per round: ${fmtRounds(ratios)}`,
);
console.log(
  `Cold start to ready /readyz: ${colds.map((c) => `${fmt(c, 0)} ms`).join(", ")}  (target < 2000 ms)`,
);
