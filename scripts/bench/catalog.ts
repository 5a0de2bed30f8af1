#!/usr/bin/env bun
/**
 * GET /v1/catalog/{slug} with a valid key vs a bare Bun.serve returning the same JSON, same
 * run. Prints figures only (the ratio is a reference: bare-server targets were withdrawn).
 * Start-up to a ready /readyz: scripts/bench/ready.ts.
 *   bun scripts/bench/catalog.ts [--duration 5] [--connections 32]
 */
import { loadArgs } from "./args";
import { type LoadResult, load, loadGenerator } from "./load";
import { startApp, startBare } from "./servers";
import { fmt, fmtMedian, fmtRounds, roundRatios } from "./stats";

const { duration, connections } = loadArgs({ duration: 5, connections: 32 });

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
