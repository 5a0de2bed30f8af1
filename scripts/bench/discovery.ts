/**
 * Web logo discovery benchmark against loopback fixture sites (print figures, no assertions).
 *
 *   bun scripts/bench/discovery.ts [--duration 5] [--domains 1000] [--only latency,wait]
 *
 * The fixture sites and their forward proxy run in a child process
 * (scripts/bench/discovery-sites.ts: four kinds of site in turn, SVG icon, apple-touch-icon,
 * manifest icon, favicon.ico); the app runs in this process, as the service does (discovery in
 * the API's own process and event loop), with DISCOVERY=on, DISCOVERY_WORKERS=8 and its DNS
 * pointed at loopback; the SVG-route load comes from a separate process (wrk or autocannon).
 *
 *  latency  100 unknown domains looked up at 10 per second (below capacity): time from each
 *           first lookup (404) to the catalog holding its artwork, p50/p95. Target p95 < 3 s.
 *  wait     100 unknown domains, each looked up once with ?wait=10000 at 10 per second: time
 *           from that first lookup to its 200 (the lookup itself waits), p50/p95, and how many
 *           answered 200.
 *  bulk     --domains unknown domains looked up at once (queue large enough): domains
 *           discovered per second with a pool of 8, RSS growth over the run (after a GC).
 *           Target: RSS growth < 150 MB.
 *  api      GET /v1/svg/{slug} p99 at a fixed rate with discovery idle, then during the bulk
 *           run. Target: during <= 1.5x idle.
 */
import { join } from "node:path";
import { createApp } from "../../src/app";
import { hasArtwork } from "../../src/catalog/service";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { collectGarbage } from "../../src/platform/memory";
import { loadArgs } from "./args";
import { load } from "./load";
import { tempDir } from "./servers";
import { fmt, percentile } from "./stats";

const ROOT = join(import.meta.dir, "../..");
const args = loadArgs(
  { duration: 5 },
  {
    domains: { type: "string", default: "1000" },
    only: { type: "string", default: "latency,wait,bulk" },
  },
);
const PHASES = new Set(String(args.values.only).split(","));
const DOMAINS = PHASES.has("bulk") ? Number(args.values.domains) : 0;
const SECONDS = args.duration;
const LATENCY_DOMAINS = 100;
const WAIT_DOMAINS = 100;
const RATE = 500;

const sitesProc = Bun.spawn(
  [
    process.execPath,
    join(ROOT, "scripts/bench/discovery-sites.ts"),
    String(DOMAINS + LATENCY_DOMAINS + WAIT_DOMAINS),
  ],
  { stdout: "pipe", stderr: "inherit" },
);
process.once("exit", () => sitesProc.kill());
const reader = sitesProc.stdout.getReader();
const first = new TextDecoder().decode((await reader.read()).value);
const { proxyUrl } = JSON.parse(first.split("\n")[0] as string) as { proxyUrl: string };

const config = loadConfig({
  LOG_LEVEL: "error",
  DATA_DIR: tempDir("bench-discovery-"),
  CATALOG_FILE: process.env.CATALOG_FILE ?? join(ROOT, "build/catalog.json"),
  PORT: "0",
  DISCOVERY: "on",
  DISCOVERY_PROXY: proxyUrl,
  DISCOVERY_ALLOW_PRIVATE: "on",
  DISCOVERY_WORKERS: "8",
  DISCOVERY_QUEUE: String(DOMAINS + LATENCY_DOMAINS + WAIT_DOMAINS),
});
const deps = await buildDeps(config);
deps.discovery.fetcher.resolve = async (host) => {
  if (host.endsWith(".test")) return ["127.0.0.1"];
  throw new Error(`no fixture for ${host}`);
};
deps.discovery.txt = null; // no BIMI lookups: the fixture names resolve nowhere
const app = createApp(deps);
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
const base = `http://127.0.0.1:${server.port}`;
const { apiKey } = await deps.accounts.createAccountWithKey({ tier: "internal" });

/** first lookup time per domain; artwork time when the catalog gets it */
const asked = new Map<string, number>();
const done = new Map<string, number>();
deps.catalog.onChange((b) => {
  const domain = b?.domains[0];
  if (b && domain && hasArtwork(b) && asked.has(domain) && !done.has(domain))
    done.set(domain, performance.now());
});
const lookup = (domain: string) => {
  asked.set(domain, performance.now());
  return fetch(`${base}/v1/brand?domain=${domain}`, { headers: { "x-api-key": apiKey } }).then(
    (r) => r.arrayBuffer(),
  );
};
const waitFor = async (domains: string[], ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until && domains.some((d) => !done.has(d))) await Bun.sleep(50);
};

console.log(`Web logo discovery against loopback fixtures (${DOMAINS} bulk domains, pool of 8)`);
console.log("Figures from a shared, loaded machine: compare runs on the same machine only.\n");

// latency: a paced stream below capacity
if (PHASES.has("latency")) {
  const paced = Array.from({ length: LATENCY_DOMAINS }, (_, i) => `site-${DOMAINS + i}.test`);
  for (const d of paced) {
    void lookup(d);
    await Bun.sleep(100);
  }
  await waitFor(paced, 30_000);
  const latencies = paced
    .filter((d) => done.has(d))
    .map((d) => (done.get(d) as number) - (asked.get(d) as number));
  console.log(
    `latency  first lookup -> artwork served, ${latencies.length}/${paced.length} found: p50 ${fmt(percentile(latencies, 50), 0)} ms, p95 ${fmt(percentile(latencies, 95), 0)} ms (target p95 < 3000 ms)`,
  );
}

// wait: the first lookup itself waits (?wait=10000) and answers 200
if (PHASES.has("wait")) {
  const first = DOMAINS + LATENCY_DOMAINS;
  const waited = Array.from({ length: WAIT_DOMAINS }, (_, i) => `site-${first + i}.test`);
  const answers: Promise<{ status: number; ms: number }>[] = [];
  for (const d of waited) {
    const t0 = performance.now();
    answers.push(
      fetch(`${base}/v1/brand?domain=${d}&wait=10000`, { headers: { "x-api-key": apiKey } }).then(
        async (r) => {
          await r.arrayBuffer();
          return { status: r.status, ms: performance.now() - t0 };
        },
      ),
    );
    await Bun.sleep(100);
  }
  const results = await Promise.all(answers);
  const ok = results.filter((r) => r.status === 200).map((r) => r.ms);
  console.log(
    `wait     first lookup with ?wait=10000 -> 200, ${ok.length}/${waited.length} answered 200: p50 ${fmt(percentile(ok, 50), 0)} ms, p95 ${fmt(percentile(ok, 95), 0)} ms`,
  );
}
if (!PHASES.has("bulk")) {
  server.stop(true);
  await deps.close();
  sitesProc.kill();
  process.exit(0);
}

// api idle
const svgLoad = () =>
  load({
    url: base,
    paths: ["/v1/svg/github", "/v1/svg/stripe", "/v1/svg/apple", "/v1/svg/google"],
    headers: { "x-api-key": apiKey },
    connections: 8,
    duration: SECONDS,
    overallRate: RATE,
    label: "svg route",
  });
const idle = await svgLoad();

// bulk, with the SVG load running alongside
collectGarbage();
const rssBefore = process.memoryUsage().rss;
let rssPeak = rssBefore;
const sampler = setInterval(() => {
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
}, 200);
const bulk = Array.from({ length: DOMAINS }, (_, i) => `site-${i}.test`);
const t0 = performance.now();
// queued as a lookup queues them (the 1,000 lookups themselves are not the load measured)
for (const d of bulk) {
  asked.set(d, performance.now());
  deps.discovery.requestDomain(d);
}
await Bun.sleep(1000);
const lag: number[] = [];
let tick = performance.now();
const lagTimer = setInterval(() => {
  const now = performance.now();
  lag.push(now - tick - 10);
  tick = now;
}, 10);
const during = await svgLoad();
clearInterval(lagTimer);
await deps.discovery.idle();
await deps.enrichment.idle();
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
collectGarbage();
const rssAfter = process.memoryUsage().rss;
const found = bulk.filter((d) => done.has(d)).length;
const stats = deps.discovery.stats();
console.log(
  `bulk     ${found}/${DOMAINS} found in ${fmt(seconds)} s: ${fmt(DOMAINS / seconds)} domains/s (pool of 8); dropped ${stats.dropped}, failed ${stats.failed}`,
);
console.log(
  `memory   RSS ${fmt(rssBefore / 2 ** 20, 0)} MB before, peak ${fmt(rssPeak / 2 ** 20, 0)} MB, ${fmt(rssAfter / 2 ** 20, 0)} MB after (after GC): growth ${fmt((rssAfter - rssBefore) / 2 ** 20, 0)} MB, peak growth ${fmt((rssPeak - rssBefore) / 2 ** 20, 0)} MB (target < 150 MB)`,
);
console.log(
  `api      SVG route at ${RATE} req/s: p99 idle ${idle.p99} ms, during discovery ${during.p99} ms (${fmt(during.p99 / Math.max(idle.p99, 0.001), 2)}x; target <= 1.5x); event-loop lag during discovery p99 ${fmt(percentile(lag, 99), 0)} ms, max ${fmt(Math.max(...lag), 0)} ms`,
);

server.stop(true);
await deps.close();
sitesProc.kill();
process.exit(0);
