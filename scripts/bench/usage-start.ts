/**
 * Start-up on an older DATA_DIR with a large JSONL usage log (prints figures, no assertions).
 *
 *   bun scripts/bench/usage-start.ts [--events 1000000] [--accounts 1000]
 *
 * Writes `events` usage events of today (real event shape, `accounts` accounts with one key
 * each, 5% refusals) into a temp DATA_DIR's JSONL day file, then, in a fresh child process, does
 * what the first start-up does with them: opens the embedded store (imports the day file into
 * SQLite, projections included) and rebuilds today's quota counters (in-memory counter store,
 * from the store's tally). Prints the time and the RSS added.
 */
import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { removeTempDir, tempDir } from "./servers";
import { fmt } from "./stats";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    accounts: { type: "string", default: "1000" },
    measure: { type: "string" },
  },
});

if (values.measure) {
  // the child: start-up work only, in a process that did nothing else
  const { EmbeddedUsageStore } = await import("../../src/store/embedded/usage");
  const { MemoryCounterStore } = await import("../../src/quota/store/memory");
  const { QuotaService } = await import("../../src/quota/service");
  const { rebuildCounters } = await import("../../src/usage/counters");
  Bun.gc(true);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const t0 = performance.now();
  const store = EmbeddedUsageStore.open(values.measure);
  const t1 = performance.now();
  peak = Math.max(peak, process.memoryUsage().rss);
  const quota = new QuotaService(new MemoryCounterStore());
  const r = await rebuildCounters(store, quota, { getAccount: async () => null });
  const t2 = performance.now();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(
    JSON.stringify({
      replayMs: t1 - t0,
      rebuildMs: t2 - t1,
      events: store.size,
      counted: r.events,
      rssStartMb: rss0 / 1048576,
      peakExtraMb: (peak - rss0) / 1048576,
    }),
  );
  process.exit(0);
}

const n = Number(values.events);
const accounts = Number(values.accounts);
const dir = tempDir("usage-start-");
const eventsDir = join(dir, "events");
mkdirSync(eventsDir, { recursive: true });
const now = Date.now();
const day = new Date(now).toISOString().slice(0, 10);
const file = join(eventsDir, `${day}.jsonl`);
const fd = openSync(file, "a");
const started = performance.now();
const BLOCK = 50_000;
for (let i = 0; i < n; i += BLOCK) {
  const lines: string[] = [];
  for (let j = i; j < Math.min(n, i + BLOCK); j++) {
    const a = j % accounts;
    const at = now - (n - j);
    lines.push(
      JSON.stringify({
        id: Bun.randomUUIDv7("hex", at),
        ts: new Date(at).toISOString(),
        day,
        accountId: `acc-${a}`,
        keyId: `key-${a}`,
        tier: "free",
        bucket: j % 3 === 0 ? "svg" : "catalog",
        route: "/v1/catalog/:slug",
        slug: "github",
        variant: null,
        status: j % 20 === 0 ? 429 : 200,
        latencyMs: 0.42,
      }),
    );
  }
  writeSync(fd, `${lines.join("\n")}\n`);
}
closeSync(fd);
const mb = statSync(file).size / 1048576;
console.log(
  `${n.toLocaleString()} events of ${day} written (${fmt(mb, 0)} MB, ${fmt((performance.now() - started) / 1000)} s)`,
);
const child = Bun.spawnSync([process.execPath, import.meta.path, "--measure", dir], {
  stdout: "pipe",
  stderr: "inherit",
});
removeTempDir(dir);
const out = child.stdout.toString().trim().split("\n").at(-1) ?? "{}";
const r = JSON.parse(out) as {
  replayMs: number;
  rebuildMs: number;
  events: number;
  counted: number;
  peakExtraMb: number;
};
const total = (r.replayMs + r.rebuildMs) / 1000;
console.log(
  `start-up: import ${fmt(r.replayMs / 1000, 2)} s + counter rebuild ${fmt(r.rebuildMs / 1000, 2)} s = ${fmt(total, 2)} s; RSS +${fmt(r.peakExtraMb, 0)} MB at peak (${r.events.toLocaleString()} events, ${r.counted.toLocaleString()} counted)`,
);
const scale = 6_000_000 / n;
console.log(
  `scaled to 6,000,000 events (linear): ${fmt(total * scale, 1)} s (memory does not scale: the file is read 4 MB at a time)`,
);
