/**
 * Logo delivery benchmarks (print figures, no assertions). Server, load generator and this
 * script run in separate processes (scripts/bench/servers.ts, load.ts).
 *
 *   bun scripts/bench/assets.ts [svg|png|mixed|all]     (default all)
 *
 *  svg    GET /v1/svg/{slug} req/s and p99 vs a bare Bun.serve returning the same bytes.
 *         Target: >= 60% of the bare server's req/s. Also against bare servers sending the
 *         app's headers, and sending them after reading X-API-Key (the least any server of
 *         this contract does), with each server's CPU time per request.
 *  png    Cold render time p50/p99 at 64, 256, 1024 px over 200 brands (render only, and a
 *         cold HTTP request), then warm (cached) PNG req/s vs the SVG route over the same
 *         brands. Targets: cold 256 px p50 < 10 ms; warm >= 80% of the SVG route.
 *  mixed  SVG p99 at a fixed request rate, alone and while a stream of cold PNG renders runs,
 *         with the render worker pool and with rendering on the request thread.
 *         Target: SVG p99 under cold renders <= 2x SVG p99 alone.
 *  logging  Cost of LOG_REQUESTS=all (a JSON line per request, read by this script as a log
 *         collector would) on the SVG route: two app processes, LOG_REQUESTS=off and all, in
 *         ABBA rounds; throughput and server CPU per request of all vs off. Decides the default
 *         (docs/logging.md): `errors` if all costs more than 5% of the route's throughput.
 * Throughput runs use wrk when installed (Debian's `wrk`: a C client, so the server is what is
 * measured; autocannon saturates its own core first with bodies of a few KB), else autocannon.
 * Options: --duration (default 5 s) per measured run, --connections (default 16), --rounds
 * (default 5, 6 for logging; interleaved; medians reported, ratios are medians of per-round
 * ratios). Env: BENCH_SVG_RATE (default 1000).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderRaster } from "../../src/assets/render";
import type { Brand, BuiltCatalog } from "../../src/catalog/built-catalog";
import { loadArgs } from "./args";
import { autocannon, type LoadResult, load, loadGenerator } from "./load";
import { type RunningServer, startApp, startBare } from "./servers";
import { fmt, fmtMedian, judged, pairedRatio, percentile, roundRatios } from "./stats";

const args = loadArgs({ duration: 5, connections: 16 });
const which = args.positionals[0] ?? "all";
const SECONDS = args.duration;
const CONNECTIONS = args.connections;
const CATALOG_FILE = process.env.CATALOG_FILE ?? join(import.meta.dir, "../../build/catalog.json");

const catalog = JSON.parse(readFileSync(CATALOG_FILE, "utf8")) as BuiltCatalog;
const withMono = catalog.brands.filter((b) => b.variants.mono);
/** 200 different brands spread over the catalog, plus a disjoint set for warm-up. */
const step = Math.floor(withMono.length / 220);
const brands: Brand[] = Array.from({ length: 200 }, (_, i) => withMono[i * step]!);
const warmupBrands = Array.from({ length: 20 }, (_, i) => withMono[i * step + 1]!);

const line = (label: string, figures: string) => console.log(`  ${label.padEnd(44)} ${figures}`);

async function withServer<T>(s: Promise<RunningServer>, fn: (s: RunningServer) => Promise<T>) {
  const server = await s;
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

async function timedGet(url: string, key: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { "x-api-key": key } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => percentile(xs, 50);

async function benchSvg() {
  const rounds = args.rounds || 5;
  console.log(
    `\nSVG route vs bare Bun.serve (${CONNECTIONS} connections, ${SECONDS} s per run, ${rounds} interleaved rounds, medians, ${loadGenerator()})`,
  );
  const slug = "github";
  const path = `/v1/svg/${slug}`;
  await withServer(startApp(), async (app) => {
    const headers = { "x-api-key": app.key };
    // the exact response of the app (minus per-request headers) for the second bare server
    const sample = await fetch(`${app.url}${path}`, { headers });
    const bytes = new Uint8Array(await sample.arrayBuffer());
    const same: Record<string, string> = {};
    sample.headers.forEach((v, k) => {
      if (!["date", "content-length", "x-request-id"].includes(k)) same[k] = v;
    });
    same["x-request-id"] = crypto.randomUUID();
    const bareCt = await startBare(bytes, { "content-type": "image/svg+xml" });
    const bareSame = await startBare(bytes, same);
    // what any implementation of the contract does at least: read X-API-Key, send these headers
    // (built from an object per request, as Elysia does; a prebuilt Headers costs less:
    // docs/performance.md, "How response headers are built")
    const bareFloor = await startBare(bytes, same, [], "x-api-key");
    try {
      const targets = [
        {
          label: "bare Bun.serve, same bytes + content-type",
          url: bareCt.url,
          serverPid: bareCt.pid,
          paths: ["/"],
          headers: {},
        },
        {
          label: `bare Bun.serve, same bytes + same ${Object.keys(same).length} headers`,
          url: bareSame.url,
          serverPid: bareSame.pid,
          paths: ["/"],
          headers: {},
        },
        {
          label: "bare Bun.serve, same headers, reads X-API-Key",
          url: bareFloor.url,
          serverPid: bareFloor.pid,
          paths: ["/"],
          headers,
        },
        {
          label: `GET ${path} (key, quota, usage event)`,
          url: app.url,
          serverPid: app.pid,
          paths: [path],
          headers,
        },
        {
          // the lightest other metered route: the cost every metered route shares
          label: "GET /v1/catalog/github (metered JSON, reference)",
          url: app.url,
          serverPid: app.pid,
          paths: ["/v1/catalog/github"],
          headers,
        },
        {
          label: "GET /healthz (same app, no auth, reference)",
          url: app.url,
          serverPid: app.pid,
          paths: ["/healthz"],
          headers: {},
        },
      ];
      const runs = targets.map(() => [] as LoadResult[]);
      for (const t of targets) await load({ ...t, duration: 2, connections: CONNECTIONS });
      for (let r = 0; r < rounds; r++)
        for (const [i, t] of targets.entries())
          runs[i]!.push(await load({ ...t, duration: SECONDS, connections: CONNECTIONS }));
      const med = runs.map((rs) => ({
        rps: median(rs.map((x) => x.rps)),
        p50: median(rs.map((x) => x.p50)),
        p99: median(rs.map((x) => x.p99)),
        non2xx: rs.reduce((n, x) => n + x.non2xx, 0),
        cpu: median(rs.map((x) => x.cpuUsPerRequest ?? Number.NaN)),
      }));
      for (const [i, t] of targets.entries()) {
        const m = med[i]!;
        line(
          t.label,
          `${fmt(m.rps, 0)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  non-2xx ${m.non2xx}  server CPU ${fmt(m.cpu)} µs/req`,
        );
      }
      // median of the per-round ratios (each app run paired with the bare runs next to it)
      line(
        "app / bare (content-type only)",
        `${fmtMedian(roundRatios(runs[3]!, runs[0]!))} (reference: bare-server targets withdrawn)`,
      );
      line("app / bare (same headers)", `${fmt(pairedRatio(runs[3]!, runs[1]!), 0)}%`);
      line("app / bare (same headers, reads key)", `${fmt(pairedRatio(runs[3]!, runs[2]!), 0)}%`);
      line(
        "bare reading key + same headers / bare",
        `${fmt(pairedRatio(runs[2]!, runs[0]!), 0)}%  (headers built per request, as Elysia does)`,
      );
      line("healthz / bare (content-type only)", `${fmt(pairedRatio(runs[5]!, runs[0]!), 0)}%`);
    } finally {
      await bareCt.stop();
      await bareSame.stop();
      await bareFloor.stop();
    }
  });
}

async function benchPng() {
  console.log("\nPNG cold renders over 200 brands (mono mark), then warm (cached) req/s");
  // render only: resvg (+ PNG encode) on this thread, no HTTP, no pool
  for (const b of warmupBrands) await renderRaster(b.variants.mono!.svg, 256, "png");
  for (const size of [64, 256, 1024]) {
    const ms: number[] = [];
    for (const b of brands) {
      const t0 = performance.now();
      await renderRaster(b.variants.mono!.svg, size, "png");
      ms.push(performance.now() - t0);
    }
    line(
      `render only, ${size} px`,
      `p50 ${fmt(percentile(ms, 50), 2)} ms  p99 ${fmt(percentile(ms, 99), 2)} ms`,
    );
  }
  await withServer(startApp(), async (app) => {
    for (const b of warmupBrands) await timedGet(`${app.url}/v1/png/${b.slug}?size=256`, app.key);
    for (const size of [64, 256, 1024]) {
      const ms: number[] = [];
      for (const b of brands)
        ms.push(await timedGet(`${app.url}/v1/png/${b.slug}?size=${size}`, app.key));
      line(
        `cold HTTP request (worker pool), ${size} px`,
        `p50 ${fmt(percentile(ms, 50), 2)} ms  p99 ${fmt(percentile(ms, 99), 2)} ms`,
      );
    }
    const headers = { "x-api-key": app.key };
    const pngPaths = brands.map((b) => `/v1/png/${b.slug}?size=256`);
    const svgPaths = brands.map((b) => `/v1/svg/${b.slug}`);
    // transport ceilings: bare servers answering with a median-sized body of each kind
    const medianBody = async (paths: string[]) => {
      const bodies: Uint8Array[] = [];
      for (const p of paths)
        bodies.push(new Uint8Array(await (await fetch(app.url + p, { headers })).arrayBuffer()));
      return bodies.sort((a, b) => a.length - b.length)[bodies.length >> 1]!;
    };
    const svgBody = await medianBody(svgPaths);
    const pngBody = await medianBody(pngPaths);
    const bareSvg = await startBare(svgBody, { "content-type": "image/svg+xml" });
    const barePng = await startBare(pngBody, { "content-type": "image/png" });
    try {
      const rounds = args.rounds || 5;
      const targets = [
        { label: "SVG route, 200 brands", url: app.url, paths: svgPaths, headers },
        { label: "PNG 256 px warm (cached), 200 brands", url: app.url, paths: pngPaths, headers },
        {
          label: `bare Bun.serve, median SVG (${svgBody.length} B)`,
          url: bareSvg.url,
          paths: ["/"],
          headers: {},
        },
        {
          label: `bare Bun.serve, median PNG (${pngBody.length} B)`,
          url: barePng.url,
          paths: ["/"],
          headers: {},
        },
      ];
      for (const t of targets) await load({ ...t, duration: 2, connections: CONNECTIONS });
      const runs = targets.map(() => [] as LoadResult[]);
      for (let r = 0; r < rounds; r++)
        for (const [i, t] of targets.entries())
          runs[i]!.push(await load({ ...t, duration: SECONDS, connections: CONNECTIONS }));
      const med = runs.map((rs) => ({
        rps: median(rs.map((x) => x.rps)),
        p99: median(rs.map((x) => x.p99)),
      }));
      for (const [i, t] of targets.entries())
        line(
          `${t.label}`,
          `${fmt(med[i]!.rps, 0)} req/s  p99 ${med[i]!.p99} ms  (median of ${rounds})`,
        );
      const [svg, png, bs, bp] = med as [
        (typeof med)[0],
        (typeof med)[0],
        (typeof med)[0],
        (typeof med)[0],
      ];
      line("warm PNG / SVG route", `${fmt((100 * png.rps) / svg.rps, 0)}%  (target >= 80%)`);
      line(
        "each route / bare server with the same body size",
        `SVG ${fmt((100 * svg.rps) / bs.rps, 0)}%  PNG ${fmt((100 * png.rps) / bp.rps, 0)}%`,
      );
    } finally {
      await bareSvg.stop();
      await barePng.stop();
    }
  });
}

/** Cold PNG renders, `concurrency` at a time, until stopped; every (brand, size) is new. */
function coldStream(app: RunningServer, concurrency: number) {
  let running = true;
  let done = 0;
  let n = 0;
  const loop = async () => {
    while (running) {
      const i = n++;
      const b = withMono[i % withMono.length]!;
      const size = 256 + ((i * 7) % 769); // 256..1024, unique per brand pass
      await timedGet(`${app.url}/v1/png/${b.slug}?size=${size}`, app.key).catch(() => {});
      done++;
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  const started = performance.now();
  return async () => {
    running = false;
    await Promise.all(loops);
    return { renders: done, perSecond: done / ((performance.now() - started) / 1000) };
  };
}

async function benchMixed() {
  const rate = Number(process.env.BENCH_SVG_RATE ?? 1000);
  console.log(
    `\nSVG p99 at ${rate} req/s (8 connections, ${SECONDS} s), alone and with a stream of cold PNG renders (256..1024 px, 2 in flight)`,
  );
  for (const [label, workers] of [
    ["worker pool", undefined],
    ["inline (no workers)", "0"],
  ] as const) {
    const env: Record<string, string> =
      workers === undefined ? {} : { BENCH_RENDER_WORKERS: workers };
    await withServer(startApp({ env }), async (app) => {
      const headers = { "x-api-key": app.key };
      const opts = { url: app.url, paths: ["/v1/svg/github"], headers, connections: 8 };
      await autocannon({ ...opts, duration: 2 });
      const alone = await autocannon({ ...opts, duration: SECONDS, overallRate: rate });
      const stop = coldStream(app, 2);
      const mixed = await autocannon({ ...opts, duration: SECONDS, overallRate: rate });
      const stream = await stop();
      line(
        `${label}: SVG alone`,
        `p50 ${alone.p50} ms  p99 ${alone.p99} ms  ${fmt(alone.rps, 0)} req/s`,
      );
      line(
        `${label}: SVG + cold PNG stream`,
        `p50 ${mixed.p50} ms  p99 ${mixed.p99} ms  ${fmt(mixed.rps, 0)} req/s  (${fmt(stream.perSecond, 1)} cold renders/s)`,
      );
      line(`${label}: p99 ratio`, `${fmt(mixed.p99 / Math.max(alone.p99, 1), 1)}x  (target <= 2x)`);
    });
  }
}

async function benchLogging() {
  const rounds = args.rounds || 6;
  console.log(
    `\nLOG_REQUESTS=all vs off on GET /v1/svg/github (${CONNECTIONS} connections, ${SECONDS} s per run, ${rounds} ABBA rounds, ${loadGenerator()})`,
  );
  const env = (mode: string) => ({ env: { LOG_REQUESTS: mode, LOG_LEVEL: "info" } });
  await withServer(startApp(env("off")), (off) =>
    withServer(startApp(env("all")), async (all) => {
      const run = (s: RunningServer, label: string) =>
        load({
          url: s.url,
          serverPid: s.pid,
          paths: ["/v1/svg/github"],
          headers: { "x-api-key": s.key },
          duration: SECONDS,
          connections: CONNECTIONS,
          label,
        });
      await run(off, "warm-up, LOG_REQUESTS=off");
      await run(all, "warm-up, LOG_REQUESTS=all");
      const offRuns: LoadResult[] = [];
      const allRuns: LoadResult[] = [];
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? ([off, all] as const) : ([all, off] as const);
        for (const s of order) {
          const isAll = s === all;
          const res = await run(
            s,
            `round ${r + 1}/${rounds}, LOG_REQUESTS=${isAll ? "all" : "off"}`,
          );
          (isAll ? allRuns : offRuns).push(res);
        }
      }
      line("LOG_REQUESTS=off", `${fmt(median(offRuns.map((x) => x.rps)), 0)} req/s (median)`);
      line("LOG_REQUESTS=all", `${fmt(median(allRuns.map((x) => x.rps)), 0)} req/s (median)`);
      line("all / off throughput", judged(roundRatios(allRuns, offRuns), 95, "above"));
      const cpu = (x: LoadResult) => x.cpuUsPerRequest;
      line("all / off server CPU per request", fmtMedian(roundRatios(allRuns, offRuns, cpu)));
    }),
  );
}

console.log(
  `catalog ${catalog.brands.length} brands; ${which}; throughput runs with ${loadGenerator()}, fixed-rate runs with autocannon`,
);
if (which === "svg" || which === "all") await benchSvg();
if (which === "png" || which === "all") await benchPng();
if (which === "mixed" || which === "all") await benchMixed();
if (which === "logging" || which === "all") await benchLogging();
