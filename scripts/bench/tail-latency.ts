#!/usr/bin/env bun
/**
 * The metered SVG route's cost per request and what stalls it at p99: GET /v1/svg/{slug} on the
 * real app (in-memory counters, usage log on) against a bare Bun.serve answering the same bytes
 * and a minimal server doing the same work (key lookup, quota, headers, usage event),
 * interleaved rounds, at each `--connections` count. Per server: req/s and its share of the
 * app's (the median of the per-round ratios), p50, p99, server CPU per request (the steadiest
 * figure on a shared machine: run it before and after a change to the request path), non-2xx
 * answers, and the garbage collections from JavaScriptCore's GC log (BUN_JSC_logGC=1 on the
 * server process): collections per 10,000 requests, the share of the run the thread was paused,
 * the median and the longest pause. A request that arrives during a pause waits for it, so when
 * pauses cover more than 1% of the time the p99 is about the pause length, whatever the route
 * does. Prints figures only.
 *   bun scripts/bench/tail-latency.ts [--duration 4] [--connections 16,50] [--rounds 3]
 *     [--baseline DIR] (the same app from another checkout, e.g. `git archive <commit> | tar -x`
 *      into DIR with node_modules and build linked, in the same rounds: a before/after
 *      comparison that the shared machine's drifting load hits alike)
 *     [--variant NAME=VAL,...] (the app again with these env variables; repeatable:
 *      `--variant USAGE_DURABILITY=strict` is the strict durability's throughput)
 *     [--holding FILE] (the bare server again, holding FILE parsed: e.g. build/catalog.json,
 *      a heap the size of the app's, to tell the route's cost from the heap's GC pauses)
 */
import { join } from "node:path";
import { loadArgs } from "./args";
import { type LoadResult, loadGenerator, loadServer } from "./load";
import {
  type GcPause,
  type RunningServer,
  spawnServer,
  startApp,
  startBare,
  startMinimal,
} from "./servers";
import { fmt, pairedRatio, percentile } from "./stats";

const { duration, connectionSets, rounds, values } = loadArgs(
  { duration: 4, connections: [16, 50], rounds: 3 },
  {
    baseline: { type: "string" },
    variant: { type: "string", multiple: true },
    holding: { type: "string" },
  },
);
const paths = ["github", "stripe", "slack", "google", "apple", "openai"].map((s) => `/v1/svg/${s}`);
const GC = { BUN_JSC_logGC: "1" };

const servers: { name: string; s: RunningServer }[] = [
  { name: "app", s: await startApp({ tier: "internal", env: GC }) },
];
const baseline = values.baseline as string | undefined;
if (baseline)
  servers.push({
    name: "app (baseline)",
    s: await spawnServer(
      [join(baseline, "scripts/bench/app-server.ts")],
      { BENCH_TIER: "internal", ...GC },
      [],
      baseline,
    ),
  });
for (const v of (values.variant as unknown as string[] | undefined) ?? []) {
  const env = Object.fromEntries(v.split(",").map((kv) => kv.split("=", 2) as [string, string]));
  servers.push({
    name: `app ${v}`,
    s: await startApp({ tier: "internal", env: { ...env, ...GC } }),
  });
}
const first = servers[0]?.s as RunningServer;
const sample = await fetch(`${first.url}/v1/svg/github`, { headers: { "x-api-key": first.key } });
const svgBytes = new Uint8Array(await sample.arrayBuffer());
const bare = await startBare(svgBytes, { "content-type": "image/svg+xml" }, [], undefined, GC);
servers.unshift({ name: "bare Bun.serve", s: bare });
// the reference for the p99: a minimal server doing the same work (key lookup, quota, headers, event)
servers.splice(1, 0, { name: "minimal, same work", s: await startMinimal(svgBytes, GC) });
const holding = values.holding as string | undefined;
if (holding)
  servers.splice(1, 0, {
    name: "bare, holding the file",
    s: await startBare(svgBytes, { "content-type": "image/svg+xml" }, [], undefined, {
      ...GC,
      BARE_HOLD: holding,
    }),
  });

interface Run extends LoadResult {
  gcs: GcPause[];
}
const run = async (s: RunningServer, connections: number, secs: number): Promise<Run> => {
  s.collections();
  const r = await loadServer(s, { paths, duration: secs, connections });
  return { ...r, gcs: s.collections() };
};

console.log(
  `Metered GET /v1/svg/{slug} tail latency  ${loadGenerator()}, ${rounds} interleaved rounds of ${duration}s, medians; GC from BUN_JSC_logGC`,
);
for (const connections of connectionSets) {
  const runs: Run[][] = servers.map(() => []);
  for (const { s } of servers) await run(s, connections, 1);
  for (let r = 0; r < rounds; r++)
    for (const [i, { s }] of servers.entries()) runs[i]?.push(await run(s, connections, duration));
  console.log(`\n${connections} connections`);
  const appRuns = runs[servers.findIndex((s) => s.name === "app")] ?? [];
  for (const [i, { name }] of servers.entries()) {
    const rs = runs[i] ?? [];
    const med = (f: (r: Run) => number) => percentile(rs.map(f), 50);
    const pausedMs = (r: Run) => r.gcs.reduce((t, g) => t + g.ms, 0);
    const gc = `   GC ${fmt(med((r) => (r.gcs.length / r.requests) * 10_000))}/10k req, paused ${fmt(
      med((r) => (pausedMs(r) / (duration * 1000)) * 100),
      2,
    )}% of the time, median pause ${fmt(
      percentile(
        rs.flatMap((r) => r.gcs.map((g) => g.ms)),
        50,
      ),
      2,
    )} ms, longest ${fmt(Math.max(0, ...rs.flatMap((r) => r.gcs.map((g) => g.ms))))} ms`;
    console.log(
      `  ${name.padEnd(28)} ${fmt(
        med((r) => r.rps),
        0,
      ).padStart(7)} req/s (${fmt(pairedRatio(rs, appRuns), 0).padStart(3)}% of app)   p50 ${fmt(
        med((r) => r.p50),
        2,
      )} ms   p99 ${fmt(
        med((r) => r.p99),
        2,
      )} ms   CPU ${fmt(med((r) => r.cpuUsPerRequest ?? Number.NaN))} µs/req   non-2xx ${rs.reduce(
        (n, r) => n + r.non2xx,
        0,
      )}${gc}`,
    );
  }
}
for (const { s } of servers) await s.stop();
