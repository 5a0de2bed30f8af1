#!/usr/bin/env bun
/**
 * The embedded usage store on SQLite, in process (prints figures only):
 *  - append: `--events` events (default 1,000,000) over `--accounts` accounts (default 1,000,
 *    two keys each, 200 brands, 5% 404s and 2% 429s) spread in time order over the 365 days
 *    before today, in batches of `--batch` (default 500, USAGE_FLUSH_EVENTS); events/s and the
 *    cost of one batch (its transaction: events, usage_daily, cells, misses) p50/p99;
 *  - disk bytes per event (database file after a WAL checkpoint, and per table and index);
 *  - RSS after seeding (after a GC);
 *  - export events/s: whole accounts read out through exportStream in pages of 50,000;
 *  - p50/p99 of a year-long day series and of an hourly 7-day series of one account
 *    (usageSeries, as GET /v1/analytics/usage answers them).
 *
 *   bun scripts/bench/usage-sqlite.ts [--events 1000000] [--accounts 1000] [--batch 500]
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Principal } from "../../src/quota/principal";
import { DB_FILE } from "../../src/store/embedded/db";
import { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import { usageSeries } from "../../src/usage/analytics/series";
import type { UsageEvent } from "../../src/usage/port";
import { eventOf } from "../../src/usage/serialize";
import { removeTempDir, tempDir } from "./servers";
import { fmt, percentile } from "./stats";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    accounts: { type: "string", default: "1000" },
    batch: { type: "string", default: "500" },
  },
});
const N = Number(values.events);
const ACCOUNTS = Number(values.accounts);
const BATCH = Number(values.batch);
const DAY = 86_400_000;
const end = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const start = end - 365 * DAY;

/** a small deterministic generator, so runs compare */
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

function sample(i: number): UsageEvent {
  const a = Math.floor(rand() * ACCOUNTS);
  const r = rand();
  const status = r < 0.05 ? 404 : r < 0.07 ? 429 : 200;
  return eventOf({
    at: start + Math.floor((i / N) * 365 * DAY),
    accountId: `acc-${a}`,
    keyId: `key-${a}-${Math.floor(rand() * 2)}`,
    tier: "pro",
    bucket: "svg",
    route: "/v1/svg/:slug",
    slug: `brand-${Math.floor(rand() ** 2 * 200)}`,
    variant: rand() < 0.5 ? "mono" : "color",
    format: "svg",
    status,
    latencyMs: Math.round(rand() ** 3 * 2000) / 100,
    ...(status === 404 && rand() < 0.5 ? { miss: [`slug:nope-${Math.floor(rand() * 50)}`] } : {}),
  });
}

const dir = tempDir("bench-usage-sqlite-");
const store = EmbeddedUsageStore.open(dir);
try {
  // append
  const batchMs: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    const batch: UsageEvent[] = [];
    for (let j = i; j < Math.min(N, i + BATCH); j++) batch.push(sample(j));
    const b0 = performance.now();
    await store.append(batch);
    batchMs.push(performance.now() - b0);
  }
  const appendMs = performance.now() - t0;
  console.log(
    `append: ${fmt(N)} events over ${ACCOUNTS} accounts in batches of ${BATCH}: ${fmt((N / appendMs) * 1000, 0)} events/s (${fmt(appendMs / 1000, 1)} s, event making included); one batch ${fmt(percentile(batchMs, 50), 1)} ms p50, ${fmt(percentile(batchMs, 99), 1)} ms p99`,
  );

  // disk
  store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const bytes = statSync(join(dir, DB_FILE)).size;
  console.log(`disk: ${fmt(bytes / 1048576, 1)} MB, ${fmt(bytes / N, 0)} bytes per event`);
  try {
    const parts = store.db.all<{ name: string; bytes: number }>(
      "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC",
    );
    for (const p of parts)
      console.log(`  ${p.name}: ${fmt(p.bytes / 1048576, 1)} MB (${fmt(p.bytes / N, 1)} B/event)`);
  } catch {
    console.log("  (no dbstat in this SQLite build: no per-table sizes)");
  }

  // memory
  Bun.gc(true);
  console.log(`RSS after seeding: ${fmt(process.memoryUsage().rss / 1048576, 0)} MB`);

  // export
  const q = { from: "1970-01-01", to: "2999-12-31", before: new Date().toISOString() };
  let exported = 0;
  let exportedBytes = 0;
  const e0 = performance.now();
  for (let a = 0; a < Math.min(ACCOUNTS, 100); a++) {
    let after: string | null = null;
    for (;;) {
      const page = await store.exportStream(`acc-${a}`, { ...q, after, limit: 50_000 });
      let bytes = 0;
      for (let c = await page.next(); c; c = await page.next()) bytes += c.byteLength;
      exportedBytes += bytes;
      exported += page.events;
      if (page.events < 50_000) break;
      after = page.last;
    }
  }
  const exportMs = performance.now() - e0;
  console.log(
    `export: ${fmt(exported)} events of ${Math.min(ACCOUNTS, 100)} accounts, ${fmt((exported / exportMs) * 1000, 0)} events/s (${fmt(exportedBytes / 1048576, 1)} MB of NDJSON)`,
  );

  // series
  const today = new Date(end).toISOString().slice(0, 10);
  const yearAgo = new Date(end - 365 * DAY).toISOString().slice(0, 10);
  const weekAgo = new Date(end - 60 * DAY).toISOString().slice(0, 10);
  const weekEnd = new Date(end - 54 * DAY).toISOString().slice(0, 10);
  for (const [name, query] of [
    ["day series, 366 days", { from: yearAgo, to: today }],
    ["day series, 366 days, group_by brand", { from: yearAgo, to: today, group_by: "brand" }],
    ["hour series, 7 days", { from: weekAgo, to: weekEnd, granularity: "hour" as const }],
  ] as const) {
    const ms: number[] = [];
    for (let i = 0; i < 200; i++) {
      const principal = {
        accountId: `acc-${i % ACCOUNTS}`,
        keyId: null,
        tier: "pro",
        limits: null,
      } as Principal;
      const s0 = performance.now();
      await usageSeries(store, principal, query, new Date(end));
      ms.push(performance.now() - s0);
    }
    console.log(
      `${name}: ${fmt(percentile(ms, 50), 2)} ms p50, ${fmt(percentile(ms, 99), 2)} ms p99`,
    );
  }
} finally {
  await store.close();
  removeTempDir(dir);
}
