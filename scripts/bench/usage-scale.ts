#!/usr/bin/env bun
/**
 * The embedded usage log at scale. Prints every figure (and the load average), asserts nothing.
 *
 *   bun scripts/bench/usage-scale.ts [--events 10000000] [--accounts 1000] [--share 0.02]
 *     [--days 366] [--reads 20] [--dir /work/bench-data/usage-scale] [--keep] [--ram-mb 1024]
 *   bun scripts/bench/usage-scale.ts --dense [--events 1000000] [--rate 15000]
 *
 * Year (default): --events usage events (usage-gen.ts) spread evenly over the --days ending now
 * across --accounts accounts, the measured one with --share of them; batched as the recorder
 * batches them (one batch per account per 250 ms flush window: at a few events a second, a batch
 * per event). --dense: a day of dense traffic instead: --events at --rate events/s on the svg
 * route, 50 accounts, 200 brands, 3 variants.
 *
 *  1. Seed, in a child process as the service writes (EmbeddedUsageLog, its write thread, appends
 *     of 20,000 events): ingest events/s, the process's peak RSS (sampled every 100 ms).
 *  2. Disk: database file + WAL, bytes per event, per table (dbstat).
 *  3. Serve: the app in a child process on the seeded DATA_DIR: each dashboard query kind
 *     (p50/p95/p99 of --reads calls after a first one), its RSS; then the export
 *     (GET /v1/analytics/events, NDJSON pages of 50,000) from the first day, from the middle
 *     of the range and of today only: events/s and the time to the first byte, RSS peak.
 * The seeded DATA_DIR is removed at the end unless --keep (then a second run skips the seed).
 * Both children run with their JavaScript heap sized for --ram-mb of RAM (0: the machine's).
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { EmbeddedUsageLog } from "../../src/usage/log/embedded";
import { fmt } from "./stats";
import { DAY_MS, exportAll, serveUncapped, timeQueries, usageFlushes } from "./usage-gen";

const { values } = parseArgs({
  options: {
    events: { type: "string" },
    accounts: { type: "string", default: "1000" },
    share: { type: "string", default: "0.02" },
    days: { type: "string", default: "366" },
    reads: { type: "string", default: "20" },
    dir: { type: "string", default: "/work/bench-data/usage-scale" },
    dense: { type: "boolean", default: false },
    rate: { type: "string", default: "15000" },
    keep: { type: "boolean", default: false },
    seed: { type: "boolean", default: false },
    "ram-mb": { type: "string", default: "1024" },
    serve: { type: "boolean", default: false },
  },
});
const DIR = values.dir as string;
const DENSE = values.dense === true;
const EVENTS = Number(values.events ?? (DENSE ? 1_000_000 : 10_000_000));
const env = {
  LOG_LEVEL: "error",
  LOG_REQUESTS: "off",
  DATA_DIR: DIR,
  USAGE_RETENTION_DAYS: "400",
  USAGE_EXPORT_SETTLE_MS: "0",
  USAGE_SPILL_RESERVE_MB: "0",
};
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const rssMb = () => process.memoryUsage.rss() / 1048576;

if (values.seed) await seed();
else if (values.serve) await serve();
else await main();

/** The child that seeds: the log as the service writes it, RSS sampled. */
async function seed() {
  const now = Date.now();
  const accounts = DENSE ? 50 : Number(values.accounts);
  const span = DENSE
    ? Math.ceil((EVENTS / Number(values.rate)) * 1000)
    : Number(values.days) * DAY_MS;
  const to = now - 120_000;
  const from = DENSE ? Math.max(to - span, to - (to % DAY_MS)) : to - span;
  const deps = await buildDeps(loadConfig(env));
  const { accountId, keyId, apiKey } = await deps.accounts.createAccountWithKey({ tier: "pro" });
  await deps.close();
  const log = EmbeddedUsageLog.open(DIR, { hourlyDays: 90 });
  let peak = rssMb();
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb());
  }, 100);
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  let done = 0;
  let shown = 0;
  let writing: Promise<number> | null = null;
  for (const batches of usageFlushes({
    accountId,
    keys: [keyId, "key-b", "key-c", "key-d", ""],
    count: EVENTS,
    from,
    to,
    accounts,
    share: DENSE ? 1 / accounts : Number(values.share),
    variants: DENSE ? 3 : 4,
    svgOnly: DENSE,
  })) {
    if (writing) await writing;
    writing = log.append(batches);
    for (const b of batches) done += b.n;
    if (done - shown >= 5_000_000 || done >= EVENTS) {
      shown = done;
      const s = (performance.now() - started) / 1000;
      console.log(
        `  seeded ${done} events in ${fmt(s, 0)} s: ${fmt(done / s / 1000, 1)}k events/s, RSS ${fmt(rssMb(), 0)} MB (peak ${fmt(peak, 0)}), load ${load()}`,
      );
    }
  }
  await writing;
  const s = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  await log.close();
  const d = new Database(join(DIR, DB_FILE));
  d.checkpoint();
  d.close();
  writeFileSync(
    join(DIR, "bench.json"),
    JSON.stringify({ apiKey, events: done, from, to, seedSeconds: s, peakRss: peak }),
  );
  console.log(
    `ingest: ${done} events in ${fmt(s, 0)} s = ${fmt(done / s / 1000, 1)}k events/s (write thread; the seeding thread's CPU ${fmt((cpu.user + cpu.system) / 1e6, 0)} s), peak RSS ${fmt(peak, 0)} MB`,
  );
}

/** The child that serves the seeded DATA_DIR. */
async function serve() {
  const deps = await buildDeps(loadConfig(env));
  const app = serveUncapped(deps);
  console.log(JSON.stringify({ url: `http://127.0.0.1:${app.server?.port}` }));
  const stop = async () => {
    await app.stop();
    await deps.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

/** The database file and WAL, and per table (dbstat), in bytes. */
function disk() {
  const db = join(DIR, DB_FILE);
  let total = 0;
  for (const f of [db, `${db}-wal`]) if (existsSync(f)) total += statSync(f).size;
  const d = new Database(db);
  const tables = d.all<{ name: string; bytes: number }>(
    "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC",
  );
  d.close();
  return { total, tables };
}

/**
 * A child process of this script. Its JavaScript heap is sized for a machine of `--ram-mb`
 * (BUN_JSC_forceRAMSize: JavaScriptCore sizes its heap and collects by the machine's RAM, 24 GB
 * here, and lets garbage pile up accordingly; 1 GiB is a modest container's budget).
 */
async function child(flag: string, stdout: "pipe" | "inherit" = "pipe") {
  const ram = Number(values["ram-mb"]);
  const proc = Bun.spawn([process.execPath, import.meta.path, ...process.argv.slice(2), flag], {
    stdout,
    stderr: "inherit",
    env: { ...process.env, ...(ram > 0 ? { BUN_JSC_forceRAMSize: String(ram * 1048576) } : {}) },
  });
  return proc;
}

async function main() {
  const meta = join(DIR, "bench.json");
  console.log(
    `Embedded usage log at scale in ${DIR}: ${
      existsSync(meta)
        ? "seeded before"
        : DENSE
          ? `${EVENTS} events of one day at ${values.rate}/s, 50 accounts, 200 brands, 3 variants (svg)`
          : `${EVENTS} events over ${values.days} days, ${values.accounts} accounts (the measured one ${Number(values.share) * 100}%)`
    }; children's heap sized for ${Number(values["ram-mb"]) > 0 ? `${values["ram-mb"]} MB of RAM (BUN_JSC_forceRAMSize)` : "this machine's RAM"}; load average ${load()}`,
  );
  if (!existsSync(meta)) {
    const s = await child("--seed", "inherit");
    if ((await s.exited) !== 0) throw new Error("seed failed");
  }
  const info = JSON.parse(readFileSync(meta, "utf8")) as {
    apiKey: string;
    events: number;
    from: number;
    to: number;
  };
  const d = disk();
  console.log(
    `disk: ${fmt(d.total / 1e9, 2)} GB (database file + WAL) = ${fmt(d.total / info.events, 1)} bytes/event: ${d.tables
      .slice(0, 8)
      .map((t) => `${t.name} ${fmt(t.bytes / info.events, 1)}`)
      .join(", ")}`,
  );

  const proc = await child("--serve");
  try {
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("server exited");
      line += new TextDecoder().decode(value);
    }
    const { url } = JSON.parse(line) as { url: string };
    const get = async (path: string) => {
      const r = await fetch(`${url}${path}`, { headers: { "x-api-key": info.apiKey } });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r;
    };
    console.log(`server RSS at start ${fmt(rssOf(proc.pid), 0)} MB; load ${load()}`);
    const worst = await timeQueries(get, Number(values.reads), info.to + 120_000);
    await new Promise((r) => setTimeout(r, 1000));
    const rss0 = rssOf(proc.pid);
    console.log(
      `dashboard: worst p99 ${fmt(worst, 1)} ms; server RSS after the queries ${fmt(rss0, 0)} MB; load ${load()}`,
    );
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const last = day(info.to);
    const mid = day(info.from + (info.to - info.from) / 2);
    for (const [label, from, max] of [
      ["from the first day", day(Math.max(info.from, info.to - 365 * DAY_MS)), 2_000_000],
      ["from the middle of the range", mid, 2_000_000],
      ["of the last day only", last, 2_000_000],
      // the first export ran on a cold process (JIT, caches): once more, warm
      ["from the first day, again", day(Math.max(info.from, info.to - 365 * DAY_MS)), 2_000_000],
    ] as const) {
      const t0 = performance.now();
      const first = await get(`/v1/analytics/events?from=${from}&to=${last}&limit=1000`);
      await first.arrayBuffer();
      const firstMs = performance.now() - t0;
      const x = await exportAll(get, () => rssOf(proc.pid), info.to, { from, to: last, max });
      console.log(
        `  export ${label} (${from}..${last}): ${x.events} events in ${fmt(x.seconds, 2)} s = ${fmt(x.events / x.seconds / 1000, 0)}k events/s; a first page of 1,000 in ${fmt(firstMs, 1)} ms; server RSS peak ${fmt(x.peak, 0)} MB`,
      );
    }
    console.log(`server RSS at the end ${fmt(rssOf(proc.pid), 0)} MB; load ${load()}`);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
  if (!values.keep) rmSync(DIR, { recursive: true, force: true });
}
