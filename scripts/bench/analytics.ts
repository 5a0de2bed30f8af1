#!/usr/bin/env bun
/**
 * GET /v1/analytics/usage over 366 days for one account with 200,000 usage events, on both
 * stores (prints figures only): the embedded store (DATA_DIR) and MongoDB (FerretDB v1,
 * scripts/mongo-local.ts; skipped with a note when its binary is absent).
 *
 * Seeding: the events (real shape from eventOf, spread evenly over the 366 days ending today,
 * all seven buckets, ~3% 404 and ~5% 429) go through the store's own usage port
 * (`UsageEventStore.append`) in batches of --batch events, which writes the raw events and folds
 * them into the usage_daily projection exactly as the app's recorder does. The seeding time is
 * printed.
 *
 * Measured, per store, in process (no socket, no load generator):
 *  - the whole route through the app (`app.handle`, X-API-Key auth, rate limit, validation,
 *    JSON): --http requests, under the route's 60-per-minute account cap;
 *  - the read itself (`usageHistory` over the store's `daily`): --reads calls.
 * Both adapters answer from the usage_daily projection (embedded: the in-memory projection
 * rebuilt at start; MongoDB: one indexed find on usage_daily by accountId and day range), never
 * from the event log: at most 366 x 7 rows per call, whatever the event count.
 *   bun scripts/bench/analytics.ts [--events 200000] [--batch 20000] [--http 50] [--reads 100]
 *    [--mongo-seed daily|events]
 */
import { parseArgs } from "node:util";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { buildDeps, type Deps } from "../../src/deps";
import { BUCKETS } from "../../src/quota/limits";
import { usageHistory } from "../../src/usage/analytics/service";
import { DailyProjection } from "../../src/usage/daily";
import type { DailyRow, UsageEvent } from "../../src/usage/port";
import { eventOf } from "../../src/usage/serialize";
import { findFerretDb, startMongoLocal } from "../mongo-local";
import { tempDir } from "./servers";
import { fmt, percentile } from "./stats";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "200000" },
    batch: { type: "string", default: "20000" },
    http: { type: "string", default: "50" },
    reads: { type: "string", default: "100" },
    /** MongoDB: "events" (default, through the port) or "daily" (only the projection rows) */
    "mongo-seed": { type: "string", default: "events" },
  },
});
const EVENTS = Number(values.events);
const BATCH = Number(values.batch);
const DAY_MS = 86_400_000;
const today = Date.UTC(
  new Date().getUTCFullYear(),
  new Date().getUTCMonth(),
  new Date().getUTCDate(),
);
const first = today - 365 * DAY_MS;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const range = `from=${iso(first)}&to=${iso(today)}`;

/** The seeded events in time order, as traffic would write them, in batches of BATCH. */
function* batches(accountId: string, keyId: string): Generator<UsageEvent[]> {
  const span = Date.now() - 1000 - first;
  for (let i = 0; i < EVENTS; i += BATCH) {
    const batch: UsageEvent[] = [];
    for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) {
      const status = j % 33 === 0 ? 404 : j % 20 === 0 ? 429 : 200;
      batch.push(
        eventOf({
          at: first + Math.floor((span * j) / EVENTS),
          accountId,
          keyId,
          tier: "pro",
          bucket: BUCKETS[j % BUCKETS.length] as (typeof BUCKETS)[number],
          route: "/v1/svg/:slug",
          slug: "github",
          variant: "mono",
          status,
          latencyMs: 2,
        }),
      );
    }
    yield batch;
  }
}

/**
 * Seeds through the usage port (events + projection; about 40 s for 200,000 events on FerretDB
 * under load), or with `daily` (--mongo-seed daily) writes only the usage_daily rows those same
 * events fold into, by the projection's own rules (DailyProjection), in the adapter's row shape
 * and _id: the read under test touches usage_daily alone.
 */
async function seed(
  deps: Deps,
  accountId: string,
  keyId: string,
  mode: "events" | "daily",
): Promise<number> {
  const started = performance.now();
  if (mode === "events") {
    for (const batch of batches(accountId, keyId))
      await deps.store.usage.append(batch, { fresh: true });
  } else {
    const projection = new DailyProjection();
    for (const batch of batches(accountId, keyId)) projection.addAll(batch);
    const rows = projection.query(accountId, iso(first), iso(today));
    const { MongoClient } = await import("mongodb");
    const client = new MongoClient(deps.config.MONGODB_URL as string);
    try {
      await client
        .db(deps.config.MONGODB_DB)
        .collection<DailyRow & { _id: string }>("usage_daily")
        .insertMany(rows.map((r) => ({ _id: `${r.accountId}|${r.day}|${r.bucket}`, ...r })));
    } finally {
      await client.close();
    }
    // rows of that shape (an earlier version's) are folded into the projection's documents
    await deps.store.usage.rebuildDaily();
  }
  return (performance.now() - started) / 1000;
}

async function timed(n: number, run: () => Promise<void>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  return ms;
}

const stat = (ms: number[]) =>
  `p50 ${fmt(percentile(ms, 50), 2)} ms   p99 ${fmt(percentile(ms, 99), 2)} ms   (${ms.length} calls)`;

async function bench(name: string, env: Record<string, string>, mode: "events" | "daily") {
  const config = loadConfig({
    LOG_LEVEL: "error",
    LOG_REQUESTS: "off",
    ...env,
    DATA_DIR: tempDir("bench-analytics-"),
    // keep every seeded day's raw events (retention would prune those older than 90 days)
    USAGE_RETENTION_DAYS: "400",
  });
  const deps = await buildDeps(config);
  try {
    const { accountId, keyId, apiKey } = await deps.accounts.createAccountWithKey({ tier: "pro" });
    const seconds = await seed(deps, accountId, keyId, mode);
    const app = createApp(deps);
    const check = await app.handle(
      new Request(`http://localhost/v1/analytics/usage?${range}`, {
        headers: { "x-api-key": apiKey },
      }),
    );
    const body = (await check.json()) as {
      days: unknown[];
      totals: Record<string, { requests: number }>;
    };
    const total = Object.values(body.totals).reduce((n, c) => n + c.requests, 0);
    if (check.status !== 200 || body.days.length !== 366 || total !== EVENTS)
      throw new Error(`${name}: ${check.status}, ${body.days.length} days, ${total} requests`);
    const http = await timed(Number(values.http), async () => {
      const r = await app.handle(
        new Request(`http://localhost/v1/analytics/usage?${range}`, {
          headers: { "x-api-key": apiKey },
        }),
      );
      if (r.status !== 200) throw new Error(`${name}: analytics answered ${r.status}`);
      await r.arrayBuffer();
    });
    const principal = { accountId, keyId, tier: "pro" as const, limits: null };
    const reads = await timed(Number(values.reads), async () => {
      await usageHistory(deps.store.usage, principal, { from: iso(first), to: iso(today) });
    });
    console.log(
      mode === "events"
        ? `${name}: seeded ${EVENTS} events through the usage port in ${fmt(seconds)} s`
        : `${name}: seeded the usage_daily rows of ${EVENTS} events in ${fmt(seconds)} s`,
    );
    console.log(`  GET /v1/analytics/usage (366 days, app.handle)  ${stat(http)}`);
    console.log(`  usageHistory over the store's daily()           ${stat(reads)}`);
  } finally {
    await deps.close();
  }
}

console.log(`GET /v1/analytics/usage over 366 days, one account with ${EVENTS} events`);
await bench("embedded", {}, "events");
const found = findFerretDb();
if (!found.bin) console.log(`MongoDB: skipped (${(found as { reason: string }).reason})`);
else {
  const mongo = await startMongoLocal({ bin: found.bin });
  try {
    await bench(
      `MongoDB (FerretDB v1, ${mongo.backend})`,
      {
        MONGODB_URL: mongo.url,
        MONGODB_DB: "bench_analytics",
        JWT_SECRET: "bench-jwt-secret-0123456789abcdefghij",
      },
      values["mongo-seed"] === "daily" ? "daily" : "events",
    );
  } finally {
    await mongo.stop();
  }
}
