#!/usr/bin/env bun
/**
 * The metered SVG route in the production shape against the embedded default, same run, same
 * machine (prints figures only):
 *   1. embedded store (DATA_DIR) + in-memory counter store (the default),
 *   2. MONGODB_URL (FerretDB v1, scripts/mongo-local.ts) + Upstash (scripts/upstash-local.ts
 *      over a real redis-server): catalog, accounts and the usage event log in MongoDB, the
 *      daily quota counters in Redis.
 * GET /v1/svg/{slug} with an internal key (no cap: every request does the full
 * check-and-increment and records a usage event). Rounds are interleaved (embedded, production,
 * embedded, ...); the ratio is the median of the per-round ratios. Needs FerretDB
 * (bash .ci/mongo.sh) and redis-server.
 *   bun scripts/bench/mongo-svg.ts [--duration 5] [--connections 32] [--rounds 3]
 */
import { startMongoLocal } from "../mongo-local";
import { loadArgs } from "./args";
import { type LoadResult, load, loadGenerator } from "./load";
import { startApp, startUpstashLocal } from "./servers";
import { fmt, fmtRounds, percentile, roundRatios } from "./stats";

const { duration, connections, rounds } = loadArgs({ duration: 5, connections: 32, rounds: 3 });

const paths = ["github", "stripe", "slack", "google", "apple", "microsoft", "openai", "figma"].map(
  (s) => `/v1/svg/${s}`,
);
const measure = (url: string, key: string, secs = duration): Promise<LoadResult> =>
  load({ url, paths, headers: { "x-api-key": key }, duration: secs, connections });

const mongo = await startMongoLocal();
const upstash = await startUpstashLocal();
const embedded = await startApp({ tier: "internal" });
const prod = await startApp({
  tier: "internal",
  env: {
    ...upstash.env,
    MONGODB_URL: mongo.url,
    MONGODB_DB: "bench_svg",
    JWT_SECRET: "bench-jwt-secret-0123456789abcdefghij",
    COUNTER_TIMEOUT_MS: "2000",
  },
});
try {
  await measure(embedded.url, embedded.key, 1);
  await measure(prod.url, prod.key, 1);
  const embRuns: LoadResult[] = [];
  const prodRuns: LoadResult[] = [];
  for (let r = 0; r < rounds; r++) {
    embRuns.push(await measure(embedded.url, embedded.key));
    prodRuns.push(await measure(prod.url, prod.key));
  }
  const med = (runs: LoadResult[], f: (r: LoadResult) => number) => percentile(runs.map(f), 50);
  const row = (name: string, runs: LoadResult[]) =>
    `${name.padEnd(40)} ${fmt(
      med(runs, (r) => r.rps),
      0,
    ).padStart(
      7,
    )} req/s   p50 ${fmt(med(runs, (r) => r.p50))} ms   p99 ${fmt(med(runs, (r) => r.p99))} ms   non-2xx ${runs.reduce((n, r) => n + r.non2xx, 0)}   errors ${runs.reduce((n, r) => n + r.errors, 0)}`;
  const pct = roundRatios(prodRuns, embRuns);
  console.log(
    `Metered GET /v1/svg/{slug}  ${loadGenerator()}, ${connections} connections, ${rounds} interleaved rounds of ${duration}s, medians`,
  );
  console.log(row("embedded + in-memory counters", embRuns));
  console.log(row(`MongoDB (FerretDB, ${mongo.backend}) + Upstash (redis)`, prodRuns));
  console.log(
    `MongoDB+Upstash / embedded: ${fmt(percentile(pct, 50), 0)}%  per round: ${fmtRounds(pct)}`,
  );
} finally {
  await embedded.stop();
  await prod.stop();
  await upstash.stop();
  await mongo.stop();
}
