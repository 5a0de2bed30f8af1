#!/usr/bin/env bun
/**
 * How soon the service is ready after a crash (prints figures, asserts nothing).
 *
 *   bun scripts/bench/usage-start.ts [--events 1000000] [--spilled 30000] [--accounts 1000]
 *
 * A DATA_DIR holding --events usage events of today (usage-gen.ts, --accounts accounts) and
 * --spilled more in spill files (a crashed process's: the store was down or behind), then the
 * service (`bun src/main.ts`, embedded store, in-memory counters) started on it: the time until
 * GET /readyz answers 200 (the counters seeded from the day's tally and the spill files), its
 * RSS then, and the time until the spill files are replayed in the background (/readyz's
 * backlog empty). The same start on an empty DATA_DIR for comparison.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { EmbeddedUsageLog } from "../../src/usage/log/embedded";
import { SpillFile, spillName } from "../../src/usage/log/spill";
import { freePort } from "../lib/net";
import { ROOT, removeTempDir, tempDir } from "./servers";
import { fmt } from "./stats";
import { DAY_MS, usageFlushes } from "./usage-gen";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    spilled: { type: "string", default: "30000" },
    accounts: { type: "string", default: "1000" },
  },
});
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** Start the service on `dir`; the times to ready and to an empty backlog, RSS at ready. */
async function start(dir: string) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  let readyMs = 0;
  let rss = 0;
  for (;;) {
    try {
      const r = await fetch(`${base}/readyz`);
      if (r.status === 200) {
        readyMs = performance.now() - t0;
        rss = rssOf(proc.pid);
        await r.arrayBuffer();
        break;
      }
      await r.arrayBuffer();
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  let replayedMs = readyMs;
  for (;;) {
    const body = (await (await fetch(`${base}/readyz`)).json()) as {
      usage: { backlog?: { spillFiles: number } };
    };
    if ((body.usage.backlog?.spillFiles ?? 0) === 0) {
      replayedMs = performance.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill("SIGTERM");
  await proc.exited;
  return { readyMs, rss, replayedMs };
}

const EVENTS = Number(values.events);
const SPILLED = Number(values.spilled);
console.log(
  `Start-up after a crash: ${EVENTS} events of today in the log, ${SPILLED} in spill files, ${values.accounts} accounts; load ${load()}`,
);
const empty = tempDir("bench-start-empty-");
const e = await start(empty);
console.log(`  empty DATA_DIR: ready in ${fmt(e.readyMs, 0)} ms, RSS ${fmt(e.rss, 0)} MB`);
removeTempDir(empty);

const dir = tempDir("bench-start-");
const now = Date.now();
const today = now - (now % DAY_MS);
const log = EmbeddedUsageLog.open(dir);
let seeded = 0;
for (const batches of usageFlushes({
  accountId: "bench-measured",
  keys: ["k"],
  count: EVENTS,
  from: today,
  to: now - 60_000,
  accounts: Number(values.accounts),
})) {
  await log.append(batches);
  for (const b of batches) seeded += b.n;
}
await log.close();
// spill files of a crashed process: batches of the last minute, a file per 5,000 events
mkdirSync(join(dir, "spill"), { recursive: true });
let spilled = 0;
let file: SpillFile | null = null;
for (const batches of usageFlushes({
  accountId: "bench-measured",
  keys: ["k"],
  count: SPILLED,
  from: now - 60_000,
  to: now - 1_000,
  accounts: Number(values.accounts),
  perAppend: 5_000,
})) {
  file?.close();
  file = new SpillFile(join(dir, "spill", spillName()));
  file.append(batches);
  for (const b of batches) spilled += b.n;
}
file?.close();
const r = await start(dir);
console.log(
  `  ${seeded} events of today, ${spilled} spilled: ready in ${fmt(r.readyMs, 0)} ms (RSS ${fmt(r.rss, 0)} MB), spill files replayed ${fmt(r.replayedMs - r.readyMs, 0)} ms after; load ${load()}`,
);
removeTempDir(dir);
