#!/usr/bin/env bun
import { loadArgs } from "./args";
import { type LoadResult, load, loadGenerator } from "./load";
/**
 * Cost of the daily quota on a metered route: GET /v1/svg/{slug} (svg bucket, mono variant) with
 *   1. the in-memory counter store,
 *   2. the Upstash counter store through scripts/upstash-local.ts in front of a real redis-server,
 * each against a bare Bun.serve returning the same bytes, all in the same run. Prints figures only.
 * The former targets against bare (55% in-memory, 30% Upstash) were withdrawn:
 * the ratios are printed as references.
 * The key is internal (no cap), so every request still does the full check-and-increment.
 * Rounds are interleaved (bare, in-memory, Upstash, bare, ...) and each ratio is the median of
 * the per-round ratios, so the shared machine's drifting speed hits both sides alike. Load
 * comes from wrk when installed (lighter on the CPU it shares with the server), else autocannon.
 *   bun scripts/bench/quota.ts [--duration 5] [--connections 32] [--rounds 5]
 */
import { startApp, startBare, startUpstashLocal } from "./servers";
import { fmt, fmtMedian, fmtRounds, percentile, roundRatios } from "./stats";

const { duration, connections, rounds } = loadArgs({ duration: 5, connections: 32, rounds: 5 });

const slugs = ["github", "stripe", "slack", "google", "apple", "microsoft", "openai", "figma"];
const paths = slugs.map((s) => `/v1/svg/${s}`);

function measure(url: string, key: string | null, secs = duration): Promise<LoadResult> {
  const headers: Record<string, string> = key ? { "x-api-key": key } : {};
  return load({ url, paths, headers, duration: secs, connections });
}

async function counted(url: string, key: string): Promise<number> {
  const r = await fetch(`${url}/v1/usage`, { headers: { "x-api-key": key } });
  const u = (await r.json()) as { endpoints: { svg: { used: number } } };
  return u.endpoints.svg.used;
}

const upstash = await startUpstashLocal();
const memApp = await startApp({ tier: "internal" });
const upApp = await startApp({ tier: "internal", env: upstash.env });
const sample = await fetch(`${memApp.url}/v1/svg/github`, { headers: { "x-api-key": memApp.key } });
if (!sample.ok) throw new Error(`GET /v1/svg/github answered ${sample.status}`);
const bare = await startBare(new Uint8Array(await sample.arrayBuffer()), {
  "content-type": "image/svg+xml",
  "cache-control": "public, max-age=86400",
});

// warm-up (JIT, caches, connections), then interleaved rounds
await measure(bare.url, null, 1);
await measure(memApp.url, memApp.key, 1);
await measure(upApp.url, upApp.key, 1);
const bareRuns: LoadResult[] = [];
const memRuns: LoadResult[] = [];
const upRuns: LoadResult[] = [];
for (let r = 0; r < rounds; r++) {
  bareRuns.push(await measure(bare.url, null));
  memRuns.push(await measure(memApp.url, memApp.key));
  upRuns.push(await measure(upApp.url, upApp.key));
}
const memUsed = await counted(memApp.url, memApp.key);
const upUsed = await counted(upApp.url, upApp.key);

await memApp.stop();
await upApp.stop();
await bare.stop();
await upstash.stop();

const med = (runs: LoadResult[], f: (r: LoadResult) => number) => percentile(runs.map(f), 50);
const row = (name: string, runs: LoadResult[]) =>
  `${name.padEnd(34)} ${fmt(
    med(runs, (r) => r.rps),
    0,
  ).padStart(
    8,
  )} req/s   p50 ${fmt(med(runs, (r) => r.p50))} ms   p99 ${fmt(med(runs, (r) => r.p99))} ms   non-2xx ${runs.reduce((n, r) => n + r.non2xx, 0)}   errors ${runs.reduce((n, r) => n + r.errors, 0)}`;
const memPct = roundRatios(memRuns, bareRuns);
const upPct = roundRatios(upRuns, bareRuns);

console.log(
  `Metered GET /v1/svg/{slug} (svg bucket)  ${loadGenerator()}, ${connections} connections, ${rounds} interleaved rounds of ${duration}s, medians`,
);
console.log(row("bare Bun.serve", bareRuns));
console.log(row("app, in-memory counter store", memRuns));
console.log(row("app, Upstash via upstash-local", upRuns));
console.log(
  `in-memory / bare: ${`${fmtMedian(memPct)} (reference: bare-server targets withdrawn)`}  per round: ${fmtRounds(memPct)}`,
);
console.log(
  `upstash / bare:   ${`${fmtMedian(upPct)} (reference)`}  per round: ${fmtRounds(upPct)}`,
);
const total = (runs: LoadResult[]) => runs.reduce((n, r) => n + r.requests, 0);
console.log(
  `requests counted by the quota: in-memory ${memUsed} of ${total(memRuns)} measured (+ warm-up); upstash ${upUsed} of ${total(upRuns)} measured (+ warm-up)`,
);
