#!/usr/bin/env bun
/**
 * Search and brand lookup speed on the full built catalog. Prints figures only.
 *  1. SearchIndex.search() in-process: p50/p99 per query kind and over the mixed set
 *     (target: well under 1 ms), plus the index build time.
 *  2. GET /v1/search and GET /v1/brand through the real app in its own process, load from
 *     autocannon in another: requests/s and latency.
 *   bun scripts/bench/search.ts [--iterations 300] [--duration 5] [--connections 32]
 */
import { BrandResolver } from "../../src/catalog/brand/service";
import { SearchIndex } from "../../src/catalog/search/service";
import { CatalogService } from "../../src/catalog/service";
import { FileCatalogSource } from "../../src/catalog/store/embedded";
import { loadConfig } from "../../src/config";
import { loadArgs } from "./args";
import { autocannon } from "./load";
import { startApp } from "./servers";
import { fmt, percentile } from "./stats";

const { duration, connections, values } = loadArgs(
  { duration: 5, connections: 32 },
  { iterations: { type: "string", default: "300" } },
);
const iterations = Number(values.iterations);

const QUERIES: Record<string, string[]> = {
  exact: ["github", "stripe", "slack", "figma", "bsky", "vscode", "stripe.com", "c++"],
  prefix: ["go", "git", "goo", "micro", "strip", "kube", "post", "spoti"],
  word: ["drive", "teams", "studio code", "cloud", "pay", "music"],
  typo: [
    "gihtub",
    "kubernetse",
    "postgress",
    "spotfy",
    "figmq",
    "dokcer",
    "javascirpt",
    "typescipt",
  ],
  multi: ["google drive", "drive google", "amazon web", "visual studio code", "apple tv"],
  none: ["qxzjvkw", "zzzzzz", "abcdefghijkl"],
};

const config = loadConfig({ ...process.env, LOG_LEVEL: "error" });
const catalog = new CatalogService(new FileCatalogSource(config.CATALOG_FILE));
await catalog.load();
let started = performance.now();
const index = new SearchIndex(catalog);
const buildMs = performance.now() - started;
started = performance.now();
const resolver = new BrandResolver(catalog);
const domainMapMs = performance.now() - started;

// warm-up (JIT)
for (let i = 0; i < 50; i++)
  for (const qs of Object.values(QUERIES)) for (const q of qs) index.search(q, 20);

const all: number[] = [];
const rows: string[] = [];
// CPU time of this process over the whole loop: a mean per search that other load on the
// machine inflates far less than wall-clock percentiles
const cpuBefore = process.cpuUsage();
for (const [kind, qs] of Object.entries(QUERIES)) {
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    for (const q of qs) {
      const t0 = performance.now();
      index.search(q, 20);
      times.push(performance.now() - t0);
    }
  }
  all.push(...times);
  rows.push(
    `  ${kind.padEnd(7)} p50 ${fmt(percentile(times, 50) * 1000, 0).padStart(5)} µs   p99 ${fmt(percentile(times, 99) * 1000, 0).padStart(5)} µs   (${qs.join(", ")})`,
  );
}

const cpu = process.cpuUsage(cpuBefore);
const cpuPerSearchUs = (cpu.user + cpu.system) / all.length;

const hosts = ["github.com", "api.github.com", "mail.google.com", "stripe.com", "nope.example"];
const lookups: number[] = [];
for (let i = 0; i < iterations * 10; i++) {
  const h = hosts[i % hosts.length] as string;
  const t0 = performance.now();
  resolver.resolveHost(h);
  lookups.push(performance.now() - t0);
}

console.log(`Catalog: ${catalog.size} brands`);
console.log(`Search index build: ${fmt(buildMs, 0)} ms; domain map: ${fmt(domainMapMs, 0)} ms`);
console.log(`SearchIndex.search(q, 20), ${iterations} rounds per query after warm-up:`);
for (const r of rows) console.log(r);
console.log(
  `  mixed   p50 ${fmt(percentile(all, 50) * 1000, 0).padStart(5)} µs   p99 ${fmt(percentile(all, 99) * 1000, 0).padStart(5)} µs   max ${fmt(Math.max(...all) * 1000, 0)} µs   (${all.length} searches)`,
);
console.log(`  CPU time per search (mean over the mixed set): ${fmt(cpuPerSearchUs, 0)} µs`);
console.log(
  `BrandResolver.resolveHost: p50 ${fmt(percentile(lookups, 50) * 1000, 1)} µs   p99 ${fmt(percentile(lookups, 99) * 1000, 1)} µs`,
);

// the routes, through the real app in its own process
const app = await startApp({ tier: "internal" });
const headers = { "x-api-key": app.key };
const searchPaths = Object.values(QUERIES)
  .flat()
  .map((q) => `/v1/search?q=${encodeURIComponent(q)}`);
const brandPaths = [
  ...hosts.slice(0, 4).map((h) => `/v1/brand?domain=${encodeURIComponent(h)}`),
  `/v1/brand?email=${encodeURIComponent("alice@eng.stripe.com")}`,
];
try {
  await autocannon({ url: app.url, paths: searchPaths, headers, duration: 1, connections });
  const s = await autocannon({ url: app.url, paths: searchPaths, headers, duration, connections });
  await autocannon({ url: app.url, paths: brandPaths, headers, duration: 1, connections });
  const b = await autocannon({ url: app.url, paths: brandPaths, headers, duration, connections });
  console.log(
    `Routes (${connections} connections, ${duration}s each, internal key, embedded store):`,
  );
  for (const [name, r] of [
    ["GET /v1/search", s],
    ["GET /v1/brand ", b],
  ] as const) {
    console.log(
      `  ${name}  ${fmt(r.rps, 0).padStart(6)} req/s   p50 ${fmt(r.p50)} ms   p99 ${fmt(r.p99)} ms   (${r.requests} requests, ${r.non2xx} non-2xx, ${r.errors} errors)`,
    );
  }
} finally {
  await app.stop();
}
