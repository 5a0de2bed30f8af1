/**
 * Server memory (RSS) over a sweep of cold 2048 px renders (prints figures, no assertions).
 *
 *   bun scripts/bench/render-memory.ts [--renders 300] [--connections 2] [--size 2048] [--format png]
 *
 * The real app (scripts/bench/app-server.ts: real catalog, default render pool) with an internal
 * key; `connections` clients request GET /v1/{format}/{slug}?size=… for the catalog's heaviest
 * marks (largest stored SVG first), each once, so every request is a cold render. The server's
 * VmRSS is sampled every 100 ms. Target: RSS stays under 1 GB over 300 renders.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BuiltCatalog } from "../../src/catalog/built-catalog";
import { loadArgs } from "./args";
import { startApp } from "./servers";
import { fmt, percentile } from "./stats";

const { connections, values } = loadArgs(
  { connections: 2 },
  {
    renders: { type: "string", default: "300" },
    size: { type: "string", default: "2048" },
    format: { type: "string", default: "png" },
  },
);
const renders = Number(values.renders);
const size = Number(values.size);
const format = String(values.format);

const CATALOG_FILE = process.env.CATALOG_FILE ?? join(import.meta.dir, "../../build/catalog.json");
const catalog = JSON.parse(readFileSync(CATALOG_FILE, "utf8")) as BuiltCatalog;
const heaviest = catalog.brands
  .map((b) => ({ slug: b.slug, bytes: b.variants.mono?.svg.length ?? 0 }))
  .filter((b) => b.bytes > 0)
  .sort((a, b) => b.bytes - a.bytes)
  .slice(0, renders);

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

const server = await startApp();
try {
  // one small render first: the pool's workers and the native modules are loaded
  await (
    await fetch(`${server.url}/v1/png/github?size=64`, { headers: { "x-api-key": server.key } })
  ).arrayBuffer();
  const baseline = rssMb(server.pid);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(server.pid)), 100);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const client = async () => {
    while (next < heaviest.length) {
      const b = heaviest[next++];
      if (!b) return;
      const t0 = performance.now();
      const r = await fetch(`${server.url}/v1/${format}/${b.slug}?size=${size}`, {
        headers: { "x-api-key": server.key },
      });
      await r.arrayBuffer();
      latencies.push(performance.now() - t0);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, client));
  const elapsed = (performance.now() - started) / 1000;
  await Bun.sleep(300);
  clearInterval(sampler);
  const end = rssMb(server.pid);
  const peak = Math.max(...samples, end);
  console.log(
    `${heaviest.length} cold ${size} px ${format} renders of the heaviest marks, ${connections} connections, ${fmt(elapsed)} s`,
  );
  console.log(
    `statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(", ")}; latency p50 ${fmt(percentile(latencies, 50), 0)} ms, p99 ${fmt(percentile(latencies, 99), 0)} ms, max ${fmt(Math.max(...latencies), 0)} ms`,
  );
  console.log(
    `server RSS: ${fmt(baseline, 0)} MB before, peak ${fmt(peak, 0)} MB, ${fmt(end, 0)} MB after (target: under 1024 MB) -> ${peak < 1024 ? "MET" : "MISSED"}`,
  );
} finally {
  await server.stop();
}
