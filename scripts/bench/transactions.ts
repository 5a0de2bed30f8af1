#!/usr/bin/env bun
/**
 * Card-statement descriptor matching speed on the full built catalog. Prints figures only.
 *  1. In process, one core (this script's thread): TransactionMatcher.match() over
 *     (a) a statement feed: --stream descriptors made from the descriptor list's
 *         (tests/catalog/lists/transactions.txt) by new store, order and phone numbers, each
 *         written differently, a fresh matcher (no cache warm) at the start;
 *     (b) every descriptor a merchant not seen before: the list through a fresh matcher per
 *         round (the floor: every lookup reads the catalog database).
 *     Target: >= 50,000 descriptors/s on one core.
 *  2. Over HTTP, the real app in its own process (embedded store, internal key), one client
 *     connection sending one request after another: GET /v1/brand?transaction= (p99 target
 *     <= 5 ms) and POST /v1/transactions with 100 descriptors (p99 target <= 50 ms).
 *   bun scripts/bench/transactions.ts [--stream 100000] [--requests 3000] [--batches 300]
 */
import { parseArgs } from "node:util";
import { BrandResolver } from "../../src/catalog/brand/service";
import { CatalogService } from "../../src/catalog/service";
import { FileCatalogSource } from "../../src/catalog/store/embedded";
import { TransactionMatcher } from "../../src/catalog/transactions/service";
import { loadConfig } from "../../src/config";
import { readDescriptorList } from "../../tests/catalog/lists/transactions";
import { processCpuSeconds } from "./load";
import { startApp } from "./servers";
import { fmt, percentile } from "./stats";

const { values } = parseArgs({
  options: {
    stream: { type: "string", default: "100000" },
    requests: { type: "string", default: "3000" },
    batches: { type: "string", default: "300" },
  },
});
const STREAM = Number(values.stream);
const REQUESTS = Number(values.requests);
const BATCHES = Number(values.batches);

/** A deterministic generator (mulberry32): the same feed on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = random(54);
const list = readDescriptorList();
/** The descriptor with each run of digits replaced by new digits of the same length. */
const renumber = (d: string) =>
  d.replace(/\d+/g, (m) => Array.from(m, () => Math.floor(rnd() * 10)).join(""));
const feed = Array.from({ length: STREAM }, () => {
  const e = list[Math.floor(rnd() * list.length)] as (typeof list)[number];
  return { ...e, descriptor: renumber(e.descriptor) };
});

const config = loadConfig({ ...process.env, LOG_LEVEL: "error" });
const catalog = new CatalogService(new FileCatalogSource(config.CATALOG_FILE));
await catalog.load();
const resolver = new BrandResolver(catalog);

/** Descriptors per second of CPU time (this thread) and of wall time. */
function timed(run: () => number) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const n = run();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(cpu0);
  const cpu = (c.user + c.system) / 1e6;
  return { n, perCpuSecond: n / cpu, perWallSecond: n / wall, usPerDescriptor: (cpu * 1e6) / n };
}

// warm-up of the JIT and of the catalog's own brand cache, on a matcher thrown away
{
  const warm = new TransactionMatcher(catalog, resolver);
  for (let i = 0; i < 3; i++) for (const e of list) warm.match(e);
}
const stream = timed(() => {
  const m = new TransactionMatcher(catalog, resolver);
  for (const e of feed) m.match(e);
  return feed.length;
});
const cold = timed(() => {
  let n = 0;
  for (let round = 0; round < 5; round++) {
    const m = new TransactionMatcher(catalog, resolver);
    for (const e of list) m.match(e);
    n += list.length;
  }
  return n;
});
const distinct = new Set(feed.map((e) => e.descriptor)).size;
console.log(`Catalog: ${catalog.size} brands; descriptor list: ${list.length}`);
console.log("TransactionMatcher.match(), in process, one thread:");
console.log(
  `  statement feed   ${fmt(stream.perCpuSecond, 0).padStart(8)} descriptors/s of CPU (${fmt(stream.perWallSecond, 0)}/s wall), ${fmt(stream.usPerDescriptor, 1)} µs each (${stream.n} descriptors, ${distinct} distinct, from ${list.length} merchants)`,
);
console.log(
  `  all unseen       ${fmt(cold.perCpuSecond, 0).padStart(8)} descriptors/s of CPU (${fmt(cold.perWallSecond, 0)}/s wall), ${fmt(cold.usPerDescriptor, 1)} µs each (the list through a fresh matcher, 5 rounds)`,
);
catalog.close();

// over HTTP: one client connection, one request after another
const app = await startApp({ tier: "internal", env: { LOG_REQUESTS: "off" } });
const headers = { "x-api-key": app.key };
try {
  const single: number[] = [];
  const batch: number[] = [];
  const get = async (i: number) => {
    const e = feed[i % feed.length] as (typeof feed)[number];
    const q = new URLSearchParams({ transaction: e.descriptor });
    if (e.country) q.set("country", e.country);
    if (e.mcc) q.set("mcc", e.mcc);
    const t0 = performance.now();
    const r = await fetch(`${app.url}/v1/brand?${q}`, { headers });
    await r.arrayBuffer();
    if (r.status !== 200 && r.status !== 404) throw new Error(`GET answered ${r.status}`);
    return performance.now() - t0;
  };
  const post = async (i: number) => {
    const transactions = feed.slice(
      (i * 100) % (feed.length - 100),
      ((i * 100) % (feed.length - 100)) + 100,
    );
    const t0 = performance.now();
    const r = await fetch(`${app.url}/v1/transactions`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ transactions }),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`POST answered ${r.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 300; i++) await get(i);
  for (let i = 0; i < 30; i++) await post(i);
  // the server's CPU time per request: what the route costs, whatever else runs on the machine
  const cpu = () => processCpuSeconds(app.pid) ?? Number.NaN;
  let c0 = cpu();
  for (let i = 0; i < REQUESTS; i++) single.push(await get(1000 + i));
  const singleCpuMs = ((cpu() - c0) * 1000) / REQUESTS;
  c0 = cpu();
  for (let i = 0; i < BATCHES; i++) batch.push(await post(100 + i));
  const batchCpuMs = ((cpu() - c0) * 1000) / BATCHES;
  console.log("Over HTTP (the app in its own process, embedded store, one connection):");
  for (const [name, xs, cpuMs] of [
    ["GET /v1/brand?transaction=     ", single, singleCpuMs],
    ["POST /v1/transactions (100)    ", batch, batchCpuMs],
  ] as const)
    console.log(
      `  ${name} p50 ${fmt(percentile(xs, 50))} ms   p99 ${fmt(percentile(xs, 99))} ms   max ${fmt(Math.max(...xs))} ms   server CPU ${fmt(cpuMs, 2)} ms/request   (${xs.length} requests)`,
    );
} finally {
  await app.stop();
}
