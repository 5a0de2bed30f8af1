#!/usr/bin/env bun
/**
 * Usage event log benchmark. Prints figures only.
 *  1. Events/s the embedded log sustains: EmbeddedUsageStore.append in batches of 500 (each
 *     batch written and fdatasync'd), and the BatchingRecorder in front of it (default
 *     flush settings) fed as fast as one producer can.
 *  2. Cost of event logging on a metered route: the real app with the batching recorder vs the
 *     same app with a no-op recorder, same run, alternating rounds. The route is
 *     GET /v1/svg/{slug} when the app serves it, else GET /v1/catalog/{slug}.
 *     Target: logging costs < 10% of the route's requests/s.
 *     The cost is 100% minus the median of the per-round ratios (with / without), each round
 *     pairing runs made seconds apart. Load from wrk when installed, else autocannon.
 *     The app runs on its defaults, so the embedded log fdatasyncs at most every 250 ms
 *     (USAGE_SYNC_MS, group commit); the events/s figures in (1) sync every batch.
 *     Also printed: the server's CPU time per request in each mode (all threads, from /proc),
 *     and the throughput a CPU-bound server loses for that extra CPU: a steadier estimate of the
 *     same cost, since a run slowed down by the machine also serves fewer requests.
 *   bun scripts/bench/usage-log.ts [--duration 5] [--connections 32] [--rounds 5] [--events 200000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { setLogLevel } from "../../src/platform/log";
import { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import { noopRecorder, type UsageEvent } from "../../src/usage/port";
import { BatchingRecorder } from "../../src/usage/writer";
import {
  fmt,
  fmtRounds,
  type LoadResult,
  load,
  loadGenerator,
  percentile,
  roundRatios,
} from "./lib";

const SLUGS = ["github", "stripe", "slack", "google", "apple", "microsoft", "openai", "figma"];

if (process.argv.includes("--serve")) await serve();
else await main();

/** Child process: the real app over a temp DATA_DIR, with or without event logging. */
async function serve() {
  const logging = process.env.BENCH_USAGE_LOG !== "off";
  const dataDir = mkdtempSync(join(tmpdir(), "bench-usage-"));
  const config = loadConfig({ LOG_LEVEL: "error", ...process.env, DATA_DIR: dataDir, PORT: "0" });
  const deps = await buildDeps(config);
  const recorder = deps.usage as BatchingRecorder;
  if (!logging) deps.usage = noopRecorder;
  const app = createApp(deps);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
  const { apiKey } = await deps.accounts.createAccountWithKey({ tier: "internal" });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, key: apiKey }));
  process.on("SIGTERM", async () => {
    await server.stop(true);
    await deps.close();
    console.log(JSON.stringify(recorder.stats()));
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

interface Server {
  url: string;
  key: string;
  pid: number;
  /** SIGTERM; resolves to the recorder's stats printed at shutdown */
  stop(): Promise<{ written: number; recorded: number; spilled: number; dropped: number }>;
}

async function spawnApp(logging: boolean): Promise<Server> {
  const proc = Bun.spawn([process.execPath, import.meta.path, "--serve"], {
    env: { ...process.env, BENCH_USAGE_LOG: logging ? "on" : "off" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const line = async () => {
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("bench server exited early");
      text += decoder.decode(value, { stream: true });
    }
    const i = text.indexOf("\n");
    const out = text.slice(0, i);
    text = text.slice(i + 1);
    return JSON.parse(out);
  };
  const first = (await line()) as { url: string; key: string };
  return {
    ...first,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      const stats = await line();
      await proc.exited;
      return stats;
    },
  };
}

function sampleEvent(i: number): Omit<UsageEvent, "id" | "day"> {
  return {
    ts: new Date().toISOString(),
    accountId: `acc-${i % 50}`,
    keyId: `key-${i % 50}`,
    tier: "pro",
    bucket: "svg",
    route: "/v1/svg/:slug",
    slug: SLUGS[i % SLUGS.length] ?? "github",
    variant: "mono",
    status: 200,
    latencyMs: 0.42,
  };
}

async function storeThroughput(n: number) {
  const dir = mkdtempSync(join(tmpdir(), "bench-usage-store-"));
  const store = new EmbeddedUsageStore(dir);
  const t0 = performance.now();
  for (let i = 0; i < n; i += 500) {
    const batch: UsageEvent[] = [];
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const e = sampleEvent(j);
      batch.push({ id: Bun.randomUUIDv7(), ...e, day: e.ts.slice(0, 10) });
    }
    await store.append(batch);
  }
  const ms = performance.now() - t0;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { eps: (n / ms) * 1000, ms };
}

async function writerThroughput(n: number) {
  const dir = mkdtempSync(join(tmpdir(), "bench-usage-writer-"));
  const store = new EmbeddedUsageStore(dir);
  const writer = new BatchingRecorder(store, {
    flushMs: 250,
    flushEvents: 500,
    spillDir: join(dir, "spill"),
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    writer.record(sampleEvent(i));
    // one producer yielding like a server between requests; waits only if the writer falls behind
    if (i % 500 === 499) {
      await new Promise((r) => setImmediate(r));
      while (writer.stats().buffered > 5_000) await new Promise((r) => setTimeout(r, 1));
    }
  }
  while (writer.stats().written + writer.stats().spilled < n) await Bun.sleep(1);
  const ms = performance.now() - t0;
  const stats = writer.stats();
  await writer.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { eps: (n / ms) * 1000, ms, stats };
}

async function main() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      duration: { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      rounds: { type: "string", default: "5" },
      events: { type: "string", default: "200000" },
    },
  });
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const rounds = Number(values.rounds);
  const events = Number(values.events);
  setLogLevel("error");

  const s = await storeThroughput(events);
  const w = await writerThroughput(events);
  console.log(`Embedded usage log, ${events} events`);
  console.log(
    `  store.append (batches of 500, fdatasync each): ${fmt(s.eps, 0)} events/s (${fmt(s.ms, 0)} ms)`,
  );
  console.log(
    `  BatchingRecorder (250 ms / 500 events)       : ${fmt(w.eps, 0)} events/s (${fmt(w.ms, 0)} ms; written ${w.stats.written}, spilled ${w.stats.spilled}, dropped ${w.stats.dropped})`,
  );

  const withLog = await spawnApp(true);
  const without = await spawnApp(false);
  const probe = await fetch(`${withLog.url}/v1/svg/github`, {
    headers: { "x-api-key": withLog.key },
  });
  await probe.arrayBuffer();
  const route = probe.status === 200 ? "svg" : "catalog";
  const paths = SLUGS.map((slug) => `/v1/${route}/${slug}`);
  const run = (srv: Server, secs: number) =>
    load({
      url: srv.url,
      paths,
      headers: { "x-api-key": srv.key },
      duration: secs,
      connections,
      serverPid: srv.pid,
    });
  await run(withLog, 1);
  await run(without, 1);
  const on: LoadResult[] = [];
  const off: LoadResult[] = [];
  for (let r = 0; r < rounds; r++) {
    on.push(await run(withLog, duration));
    off.push(await run(without, duration));
  }
  const stats = await withLog.stop();
  await without.stop();
  const med = (xs: LoadResult[], f: (x: LoadResult) => number) => percentile(xs.map(f), 50);
  const requestsOn = on.reduce((a, x) => a + x.requests, 0);
  const row = (xs: LoadResult[]) =>
    `${fmt(
      med(xs, (x) => x.rps),
      0,
    )} req/s  p50 ${fmt(med(xs, (x) => x.p50))} ms  p99 ${fmt(med(xs, (x) => x.p99))} ms  non-2xx ${xs.reduce((a, x) => a + x.non2xx, 0)}  server CPU ${fmt(med(xs, (x) => x.cpuUsPerRequest ?? Number.NaN))} µs/req`;
  console.log(
    `GET /v1/${route}/{slug}, ${loadGenerator()}, ${connections} connections, ${rounds} x ${duration}s per mode, alternating, same run, medians`,
  );
  console.log(`  with event logging   : ${row(on)}`);
  console.log(`  without (no-op)      : ${row(off)}`);
  // the cost in throughput, and the same from CPU time per request (steadier than req/s on a
  // shared machine): what throughput a CPU-bound server loses when each request needs `on /
  // off` times the CPU
  const costs = roundRatios(on, off).map((r) => 100 - r);
  const cpuCosts = roundRatios(off, on, (x) => x.cpuUsPerRequest).map((r) => 100 - r);
  const cost = percentile(costs, 50);
  console.log(
    `  cost of logging      : ${fmt(cost)}% of throughput (target < 10%) ${cost < 10 ? "MET" : "MISSED"}; per round: ${fmtRounds(costs, 1)}`,
  );
  console.log(
    `  cost from server CPU : ${fmt(percentile(cpuCosts, 50))}% of throughput when CPU-bound; per round: ${fmtRounds(cpuCosts, 1)}`,
  );
  console.log(
    `  events written by the logging server: ${stats.written} (recorded ${stats.recorded}, spilled ${stats.spilled}, dropped ${stats.dropped}; load requests ${requestsOn} + warm-up and probe)`,
  );
}
