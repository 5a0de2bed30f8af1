#!/usr/bin/env bun
/**
 * What stalls the metered SVG route at p99: GET /v1/svg/{slug} on the real app against a bare
 * Bun.serve answering the same bytes (the minimal server), interleaved rounds, at each
 * `--connections` count. Besides req/s, p50, p99 and server CPU per request, it reads the app's
 * garbage collections from JavaScriptCore's GC log (BUN_JSC_logGC=1 on the server process):
 * collections per 10,000 requests, the share of the run the thread was paused, the median and the
 * longest pause (for the minimal server too). A request that arrives during a pause waits for it, so when pauses cover more than 1% of
 * the time the p99 is about the pause length, whatever the route does. Prints figures only.
 *   bun scripts/bench/tail-latency.ts [--duration 4] [--connections 16,50] [--rounds 3]
 *     [--baseline DIR] (the app of another checkout, as in metered-svg.ts)
 *     [--variant NAME=VAL,...] (the app again with these env variables; repeatable)
 *     [--holding FILE] (the minimal server again, holding FILE parsed: e.g. build/catalog.json,
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
import { fmt, percentile } from "./stats";

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
// the reference: a minimal server doing the same work (key lookup, quota, headers, event)
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
      ).padStart(7)} req/s   p50 ${fmt(
        med((r) => r.p50),
        2,
      )} ms   p99 ${fmt(
        med((r) => r.p99),
        2,
      )} ms   CPU ${fmt(med((r) => r.cpuUsPerRequest ?? Number.NaN))} µs/req${gc}`,
    );
  }
}
for (const { s } of servers) await s.stop();
