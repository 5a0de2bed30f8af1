#!/usr/bin/env bun
/**
 * The dashboard analytics (GET /v1/analytics/usage and its kin): --events usage events over the 366 days ending now, spread
 * over --accounts accounts (every one's events interleaved in time), the queries reading the
 * first account's, on the embedded store and on MongoDB (FerretDB v1, scripts/mongo-local.ts;
 * `--mongo false` or no binary: skipped). Prints figures only.
 *
 * Events: usage-gen.ts (7 buckets, 5 keys, 200 brands, a few popular), batched as the recorder
 * batches them, seeded through the log's `append` (appends of --batch events), which writes the
 * log and counts every projection as the service does (on MongoDB: the projector counts them).
 *
 * Measured over a real socket (the app listening on 127.0.0.1, sequential fetches; the
 * per-minute rate limits run on a clock that moves a minute per call so they never refuse):
 *  - the first series query;
 *  - logging once the cells exist: CPU per event of a 20,000-event append (this process's
 *    CPU: on MongoDB the projector's work, on the embedded store the encoding for the thread);
 *  - p50/p95/p99 of each query kind below, --reads calls each after a first one (printed apart:
 *    it reads pages of the database not yet in its cache);
 *  - in process, the 366-day history read alone (`usageHistory` over the store's daily
 *    projection, no HTTP): --reads calls;
 *  - GET /v1/analytics/events: every event of the account in pages of 50,000 (events/s, and the
 *    RSS growth: the peak over the RSS before, sampled as the body arrives);
 *  - the projection rebuild (time, RSS before/after).
 *   bun scripts/bench/analytics-dash.ts [--events 200000] [--accounts 1] [--batch 20000] [--reads 30]
 *    [--mongo true|false] [--embedded true|false] [--queries true|false] [--export true|false]
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { usageHistory } from "../../src/usage/analytics/service";
import { findFerretDb, startMongoLocal } from "../mongo-local";
import { tempDir } from "./servers";
import { fmt, percentile } from "./stats";
import { exportAll, serveUncapped, timeQueries, usageFlushes } from "./usage-gen";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "200000" },
    /** the events are spread over this many accounts; the queries read the first one's */
    accounts: { type: "string", default: "1" },
    batch: { type: "string", default: "20000" },
    reads: { type: "string", default: "30" },
    mongo: { type: "string", default: "true" },
    embedded: { type: "string", default: "true" },
    /** "false": skip the query figures */
    queries: { type: "string", default: "true" },
    /** "false": skip the export and rebuild figures */
    export: { type: "string", default: "true" },
  },
});
const EVENTS = Number(values.events);
const ACCOUNTS = Number(values.accounts);
const BATCH = Number(values.batch);
const READS = Number(values.reads);
const now = Date.now();
const today = new Date(now).toISOString().slice(0, 10);
const first = Date.UTC(
  new Date(now).getUTCFullYear(),
  new Date(now).getUTCMonth(),
  new Date(now).getUTCDate() - 365,
);
const firstDay = new Date(first).toISOString().slice(0, 10);

/** the events in time order, BATCH at a time; every ACCOUNTS-th is the measured account's */
const batches = (
  accountId: string,
  keys: string[],
  count = EVENTS,
  from = first,
  to = now - 60_000,
) => usageFlushes({ accountId, keys, count, perAppend: BATCH, from, to, accounts: ACCOUNTS });

const rssMb = () => process.memoryUsage.rss() / 1048576;

async function bench(name: string, env: Record<string, string>) {
  const config = loadConfig({
    LOG_LEVEL: "error",
    LOG_REQUESTS: "off",
    ...env,
    DATA_DIR: tempDir("bench-dash-"),
    USAGE_RETENTION_DAYS: "400",
    USAGE_EXPORT_SETTLE_MS: "0",
  });
  const deps = await buildDeps(config);
  // the per-minute caps still run, on a clock that moves a minute per call
  const app = serveUncapped(deps);
  const base = `http://127.0.0.1:${app.server?.port}`;
  try {
    const { accountId, keyId, apiKey } = await deps.accounts.createAccountWithKey({ tier: "pro" });
    const keys = [keyId, "key-b", "key-c", "key-d", ""];
    let started = performance.now();
    for (const list of batches(accountId, keys)) await deps.store.usage.append(list);
    await deps.store.usage.settled();
    console.log(
      `${name}: seeded ${EVENTS} events in ${fmt((performance.now() - started) / 1000)} s`,
    );

    const get = async (path: string) => {
      const r = await fetch(`${base}${path}`, { headers: { "x-api-key": apiKey } });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r;
    };
    started = performance.now();
    const check = (await (
      await get(`/v1/analytics/usage?from=${firstDay}&to=${today}&granularity=day`)
    ).json()) as {
      totals: { requests: number };
    };
    console.log(
      `  first series query  ${fmt(performance.now() - started, 0)} ms, ${check.totals.requests} requests counted`,
    );
    // logging once the cells exist: appends of fresh events (the last minute)
    const recent = [...batches(accountId, keys, 20_000, now - 60_000, now)].flat();
    const cpu = process.cpuUsage();
    await deps.store.usage.append(recent);
    await deps.store.usage.settled();
    const used = process.cpuUsage(cpu);
    const n = recent.reduce((x, b) => x + b.n, 0);
    console.log(
      `  logging: append ${fmt((used.user + used.system) / n, 2)} µs CPU/event in this process (log and projections)`,
    );
    if (values.queries !== "false") {
      await timeQueries(get, READS, now);
      const principal = { accountId, keyId, tier: "pro" as const, limits: null };
      const ms: number[] = [];
      for (let i = 0; i < READS; i++) {
        const t = performance.now();
        await usageHistory(
          deps.store.usage,
          principal,
          { from: firstDay, to: today },
          new Date(now),
        );
        ms.push(performance.now() - t);
      }
      console.log(
        `  ${"history, read alone in process".padEnd(40)} p50 ${fmt(percentile(ms, 50), 2).padStart(7)} ms  p99 ${fmt(percentile(ms, 99), 2).padStart(7)} ms`,
      );
    }

    if (values.export === "false") return;
    // export: every event, 50,000 a page
    Bun.gc(true);
    const rss0 = rssMb();
    const x = await exportAll(get, rssMb, now);
    console.log(
      `  export (NDJSON, pages of 50,000): ${x.events} events in ${fmt(x.seconds, 2)} s = ${fmt(x.events / x.seconds / 1000, 1)}k events/s, RSS ${fmt(rss0, 0)} -> peak ${fmt(x.peak, 0)} MB (growth ${fmt(x.peak - rss0, 0)} MB)`,
    );

    Bun.gc(true);
    const before = rssMb();
    started = performance.now();
    const r = await deps.store.usage.rebuild();
    console.log(
      `  projections rebuild: ${r.events} events in ${fmt((performance.now() - started) / 1000, 2)} s, RSS ${fmt(before, 0)} -> ${fmt(rssMb(), 0)} MB`,
    );
  } finally {
    await app.stop();
    await deps.close();
  }
}

console.log(
  `Dashboard analytics over HTTP, ${EVENTS} events over 366 days in ${ACCOUNTS} account(s), the queries reading one (${Math.ceil(EVENTS / ACCOUNTS)} events)`,
);
if (values.embedded !== "false") await bench("embedded", {});
const found = values.mongo === "false" ? { bin: null, reason: "--mongo false" } : findFerretDb();
if (!found.bin) console.log(`MongoDB: skipped (${(found as { reason: string }).reason})`);
else {
  const mongo = await startMongoLocal({ bin: found.bin });
  try {
    await bench(`MongoDB (FerretDB v1, ${mongo.backend})`, {
      MONGODB_URL: mongo.url,
      MONGODB_DB: "bench_dash",
      JWT_SECRET: "bench-jwt-secret-0123456789abcdefghij",
    });
  } finally {
    await mongo.stop();
  }
}
