#!/usr/bin/env bun
import { join } from "node:path";
import { loadArgs } from "./args";
import { type LoadResult, loadGenerator, loadServer } from "./load";
/**
 * The metered SVG route's cost per request: GET /v1/svg/{slug} on the real app (in-memory
 * counters, usage log on) against a bare Bun.serve returning the same bytes, interleaved rounds.
 * Server CPU per request is the steadiest figure on a shared machine. Run it before and after
 * a change to the request path (metrics, logging, hooks). Prints figures only.
 * With --baseline DIR, the same app from another checkout (e.g. `git archive <commit> | tar -x`
 * into DIR, with node_modules and build linked) runs in the same interleaved rounds: a
 * before/after comparison that the shared machine's drifting load hits alike.
 * With --strict, the app with USAGE_DURABILITY=strict runs in the same rounds too.
 *   bun scripts/bench/metered-svg.ts [--duration 4] [--connections 16] [--rounds 3] [--baseline DIR] [--strict]
 */
import { spawnServer, startApp, startBare } from "./servers";
import { fmt, percentile } from "./stats";

const { duration, connections, rounds, values } = loadArgs(
  { duration: 4, connections: 16, rounds: 3 },
  { baseline: { type: "string" }, strict: { type: "boolean", default: false } },
);
const paths = ["github", "stripe", "slack", "google", "apple", "openai"].map((s) => `/v1/svg/${s}`);

const baseline = values.baseline as string | undefined;
const app = await startApp({ tier: "internal" });
const base = baseline
  ? await spawnServer(
      [join(baseline, "scripts/bench/app-server.ts")],
      { BENCH_TIER: "internal" },
      [],
      baseline,
    )
  : null;
// --strict: the same app with USAGE_DURABILITY=strict (answers once the event is fdatasync'd)
const strict = values.strict
  ? await startApp({ tier: "internal", env: { USAGE_DURABILITY: "strict" } })
  : null;
const sample = await fetch(`${app.url}/v1/svg/github`, { headers: { "x-api-key": app.key } });
const bare = await startBare(new Uint8Array(await sample.arrayBuffer()), {
  "content-type": "image/svg+xml",
});
const run = (s: { url: string; key: string; pid: number }, secs = duration) =>
  loadServer(s, { paths, duration: secs, connections });
const servers = [bare, app, ...(base ? [base] : []), ...(strict ? [strict] : [])];
const runs: LoadResult[][] = servers.map(() => []);
for (const s of servers) await run(s, 1);
for (let r = 0; r < rounds; r++)
  for (const [i, s] of servers.entries()) runs[i]?.push(await run(s));
for (const s of servers) await s.stop();

const med = (runs: LoadResult[], f: (r: LoadResult) => number | undefined) =>
  percentile(
    runs.map((r) => f(r) ?? Number.NaN),
    50,
  );
const row = (name: string, runs: LoadResult[]) =>
  `${name.padEnd(16)} ${fmt(
    med(runs, (r) => r.rps),
    0,
  ).padStart(
    7,
  )} req/s   p50 ${fmt(med(runs, (r) => r.p50))} ms   p99 ${fmt(med(runs, (r) => r.p99))} ms   server CPU ${fmt(med(runs, (r) => r.cpuUsPerRequest))} µs/req   non-2xx ${runs.reduce((n, r) => n + r.non2xx, 0)}`;
console.log(
  `Metered GET /v1/svg/{slug}  ${loadGenerator()}, ${connections} connections, ${rounds} interleaved rounds of ${duration}s, medians`,
);
console.log(row("bare Bun.serve", runs[0] ?? []));
console.log(row("app", runs[1] ?? []));
if (base) console.log(row("app (baseline)", runs[2] ?? []));
if (strict) console.log(row("app (strict)", runs[base ? 3 : 2] ?? []));
