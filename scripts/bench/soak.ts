#!/usr/bin/env bun
/**
 * A bounded soak: the real app (its own process, embedded store, in-memory counters) under a
 * fixed rate of half its measured capacity on mixed metered routes (SVG, PNG, search, brand),
 * plus GET /v1/analytics/usage every 2 s (its per-account limit is 60 a minute), for
 * `--duration` seconds (default 600). Every `--sample` seconds (default 10) it records the
 * server's RSS and the window's p99. Prints figures only:
 *  - RSS growth after warm-up (the mean of the last 3 samples against the first 3 after
 *    warm-up: the first quarter of the run, at most 60 s); target < 5%;
 *  - errors: socket errors, timeouts, 5xx, and analytics answers other than 200;
 *  - events lost: answers the clients got on metered routes against the usage events the app
 *    counted for them (GET /v1/analytics/usage totals, read before and after the soak).
 * Capacity is measured first with an unthrottled `--connections` run of 5 s on the same mix.
 *   bun scripts/bench/soak.ts [--duration 600] [--connections 16] [--sample 10]
 */
import { readFileSync } from "node:fs";
import { loadArgs } from "./args";
import { type LoadResult, load } from "./load";
import { startApp } from "./servers";
import { fmt, percentile } from "./stats";

const { duration, connections, values } = loadArgs(
  { duration: 600, connections: 16 },
  { sample: { type: "string", default: "10" } },
);
const sampleSecs = Number(values.sample);
const paths = [
  ...["github", "stripe", "slack", "google"].map((s) => `/v1/svg/${s}`),
  ...["github", "openai"].map((s) => `/v1/png/${s}?size=128`),
  "/v1/search?q=git&limit=10",
  "/v1/search?q=pay&limit=10",
  "/v1/brand?domain=github.com",
  "/v1/brand?domain=stripe.com",
];

const app = await startApp({ tier: "internal" });
const headers = { "x-api-key": app.key };
const today = () => new Date().toISOString().slice(0, 10);

/** usage events the app counted for this key's account today, all buckets */
async function eventsCounted(): Promise<number> {
  // the recorder writes within USAGE_FLUSH_MS (250 ms by default)
  await Bun.sleep(1000);
  const r = await fetch(`${app.url}/v1/analytics/usage?from=${today()}&to=${today()}`, {
    headers,
  });
  if (r.status !== 200) throw new Error(`GET /v1/analytics/usage answered ${r.status}`);
  const body = (await r.json()) as { totals: Record<string, { requests: number }> };
  return Object.values(body.totals).reduce((n, b) => n + b.requests, 0);
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const capacity = await load({ url: app.url, paths, headers, duration: 5, connections });
const rate = Math.max(1, Math.round(capacity.rps / 2));
console.log(
  `Soak: ${duration} s at ${rate} req/s (half of the ${fmt(capacity.rps, 0)} req/s measured), ${connections} connections, mixed routes: ${paths.join(" ")}; sampled every ${sampleSecs} s`,
);

const before = await eventsCounted();
let analyticsFailed = 0;
let analyticsCalls = 0;
const analytics = setInterval(() => {
  analyticsCalls++;
  fetch(`${app.url}/v1/analytics/usage?from=${today()}&to=${today()}&bucket=svg`, { headers })
    .then(async (r) => {
      await r.arrayBuffer();
      if (r.status !== 200) analyticsFailed++;
    })
    .catch(() => analyticsFailed++);
}, 2000);

interface Sample extends LoadResult {
  t: number;
  rss: number;
}
const samples: Sample[] = [];
const started = performance.now();
console.log("    t      req/s    p99 ms   RSS MB   non-2xx  errors");
while ((performance.now() - started) / 1000 + sampleSecs <= duration) {
  const r = await load({
    url: app.url,
    paths,
    headers,
    duration: sampleSecs,
    connections,
    overallRate: rate,
    label: "soak",
  });
  const s = { ...r, t: Math.round((performance.now() - started) / 1000), rss: rssMb(app.pid) };
  samples.push(s);
  console.log(
    `  ${String(s.t).padStart(4)} ${fmt(s.rps, 0).padStart(9)} ${fmt(s.p99, 1).padStart(9)} ${fmt(s.rss, 1).padStart(8)} ${String(s.non2xx).padStart(9)} ${String(s.errors).padStart(7)}`,
  );
}
clearInterval(analytics);
const after = await eventsCounted();
await app.stop();

const warmup = Math.min(60, duration / 4);
const steady = samples.filter((s) => s.t > warmup);
const mean = (xs: Sample[]) => xs.reduce((n, s) => n + s.rss, 0) / xs.length;
const first = mean(steady.slice(0, 3));
const last = mean(steady.slice(-3));
const answered = samples.reduce((n, s) => n + s.requests, 0);
const events = after - before;
const errors = samples.reduce((n, s) => n + s.errors, 0);
const non2xx = samples.reduce((n, s) => n + s.non2xx, 0);
const p99s = samples.map((s) => s.p99);
console.log(`
RSS after warm-up (${fmt(warmup, 0)} s): ${fmt(first, 1)} -> ${fmt(last, 1)} MB, growth ${fmt(((last - first) / first) * 100, 1)}% (target < 5%)
p99 per ${sampleSecs} s window: median ${fmt(percentile(p99s, 50), 1)} ms, max ${fmt(Math.max(...p99s), 1)} ms
errors: ${errors} socket errors/timeouts, ${non2xx} non-2xx answers on metered routes, ${analyticsFailed} of ${analyticsCalls} analytics calls not 200
events: ${answered} metered answers, ${events} usage events counted, lost ${Math.max(0, answered - events)}${events > answered ? ` (${events - answered} more events than answers: requests in flight when a window's load generator stopped)` : ""}`);
