/**
 * The usage events and dashboard queries of the analytics benchmarks (analytics-dash.ts,
 * usage-100m.ts): a fixed pseudo-random sequence, so every run seeds the same events.
 *
 * Events (eventOf, the recorder's own shape): 7 buckets, 5 keys, 200 brands (a few popular),
 * 304/404/500 answers, folded 429 bursts, misses on the 404s, latencies log-normal around 1.5 ms
 * with a slow tail, spread evenly in time from..to.
 */
import { createApp } from "../../src/app";
import type { Deps } from "../../src/deps";
import { RateLimiter } from "../../src/quota/rate-limit";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import type { UsageEvent } from "../../src/usage/port";
import { eventOf } from "../../src/usage/serialize";
import { fmt, percentile } from "./stats";

export const DAY_MS = 86_400_000;

/** a fixed pseudo-random sequence (mulberry32) */
let seedState = 42;
function rand(): number {
  seedState = (seedState + 0x6d2b79f5) | 0;
  let x = Math.imul(seedState ^ (seedState >>> 15), 1 | seedState);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(list: readonly T[], weights: readonly number[]): T => {
  let r = rand() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < list.length; i++) {
    r -= weights[i] as number;
    if (r <= 0) return list[i] as T;
  }
  return list[list.length - 1] as T;
};

const BUCKET_LIST = ["svg", "png", "webp", "catalog", "search", "domain", "batch"] as const;
const BUCKET_WEIGHTS = [50, 20, 5, 10, 8, 5, 2];
const BRANDS = Array.from({ length: 200 }, (_, i) => `brand-${i}`);
const BRAND_WEIGHTS = BRANDS.map((_, i) => 1 / (i + 1));
const VARIANTS = ["mono", "color", "icon", "wordmark"];

export interface GenOptions {
  /** the measured account (its keys: `keys`) */
  accountId: string;
  keys: string[];
  count: number;
  batch: number;
  from: number;
  to: number;
  /** accounts in all: the others are `bench-account-<n>` */
  accounts: number;
  /** the measured account's share of the events (default: 1 / accounts) */
  share?: number;
}

/** The events in time order, `batch` at a time. */
export function* usageBatches(o: GenOptions): Generator<UsageEvent[]> {
  const span = o.to - o.from;
  const every = Math.max(1, Math.round(1 / (o.share ?? 1 / o.accounts)));
  for (let i = 0; i < o.count; i += o.batch) {
    const batch: UsageEvent[] = [];
    for (let j = i; j < Math.min(o.count, i + o.batch); j++) {
      const bucket = pick(BUCKET_LIST, BUCKET_WEIGHTS);
      const r = rand();
      const status = r < 0.03 ? 404 : r < 0.08 ? 304 : r < 0.1 ? 429 : r < 0.102 ? 500 : 200;
      const image = bucket === "svg" || bucket === "png" || bucket === "webp";
      const slug = bucket === "search" ? null : pick(BRANDS, BRAND_WEIGHTS);
      const latency = Math.exp(Math.log(1.5) + 0.8 * Math.sqrt(-2 * Math.log(rand() || 1e-9)));
      const other = o.accounts > 1 ? 1 + (j % (o.accounts - 1)) : 0;
      batch.push(
        eventOf({
          at: o.from + Math.floor((span * j) / o.count),
          accountId: j % every === 0 ? o.accountId : `bench-account-${other}`,
          keyId: o.keys[j % o.keys.length] as string,
          tier: "pro",
          bucket,
          route: image ? `/v1/${bucket}/:slug` : `/v1/${bucket}`,
          slug,
          variant: image ? (VARIANTS[j % VARIANTS.length] as string) : null,
          format: image ? bucket : undefined,
          miss: status === 404 ? [`slug:missing-${j % 500}`] : undefined,
          status,
          latencyMs: Math.round(latency * 100) / 100,
          count: status === 429 ? 1 + (j % 20) : undefined,
        }),
      );
    }
    yield batch;
  }
}

/** The dashboard's query kinds over 366 days to `today` ("MISSES": the misses route). */
export function dashQueries(firstDay: string, today: string, lastWeek: string): [string, string][] {
  return [
    ["history, 366 days (no new parameter)", `from=${firstDay}&to=${today}`],
    ["series, 366 days", `from=${firstDay}&to=${today}&granularity=day`],
    ["366 days by bucket", `from=${firstDay}&to=${today}&group_by=bucket`],
    [
      "366 days top 10 brands x status_class",
      `from=${firstDay}&to=${today}&group_by=brand,status_class`,
    ],
    ["366 days, brand= filter, by key", `from=${firstDay}&to=${today}&brand=brand-3&group_by=key`],
    ["7 days hourly by bucket", `from=${lastWeek}&to=${today}&granularity=hour&group_by=bucket`],
    ["misses, 366 days", "MISSES"],
  ];
}

/** The path of a dashQueries query. */
export const dashPath = (q: string, firstDay: string, today: string) =>
  q === "MISSES" ? `/v1/analytics/misses?from=${firstDay}&to=${today}` : `/v1/analytics/usage?${q}`;

/** GET a path of the app (the measured account's key), failing on anything but 200. */
export type Get = (path: string) => Promise<Response>;

/**
 * Each dashboard query kind: a first call (it reads pages not yet in the database's cache),
 * then `reads` calls; one line each with p50/p95/p99 and the first call.
 */
export async function timeQueries(get: Get, reads: number, now = Date.now()): Promise<void> {
  const today = new Date(now).toISOString().slice(0, 10);
  const firstDay = new Date(now - 365 * DAY_MS).toISOString().slice(0, 10);
  const lastWeek = new Date(now - 6 * DAY_MS).toISOString().slice(0, 10);
  for (const [label, q] of dashQueries(firstDay, today, lastWeek)) {
    const path = dashPath(q, firstDay, today);
    let t = performance.now();
    await (await get(path)).arrayBuffer();
    const firstMs = performance.now() - t;
    const ms: number[] = [];
    for (let i = 0; i < reads; i++) {
      t = performance.now();
      await (await get(path)).arrayBuffer();
      ms.push(performance.now() - t);
    }
    const p = (n: number) => fmt(percentile(ms, n), 2).padStart(7);
    console.log(
      `  ${label.padEnd(40)} p50 ${p(50)} ms  p95 ${p(95)} ms  p99 ${p(99)} ms  first ${fmt(firstMs, 0)} ms`,
    );
  }
}

/**
 * Every event of the account over 366 days through GET /v1/analytics/events, pages of 50,000,
 * each body read as it arrives; `rss` sampled as it goes. Resolves to the events, seconds and
 * the peak of `rss`.
 */
export async function exportAll(
  get: Get,
  rss: () => number,
  now = Date.now(),
): Promise<{ events: number; seconds: number; peak: number }> {
  const today = new Date(now).toISOString().slice(0, 10);
  const firstDay = new Date(now - 365 * DAY_MS).toISOString().slice(0, 10);
  let peak = rss();
  let events = 0;
  let cursor: string | null = null;
  const started = performance.now();
  do {
    const r = await get(
      `/v1/analytics/events?from=${firstDay}&to=${today}&limit=50000${cursor ? `&cursor=${cursor}` : ""}`,
    );
    cursor = r.headers.get("x-next-cursor");
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    for (let chunks = 0; ; chunks++) {
      const { done, value } = await reader.read();
      if (done) break;
      for (let i = value.indexOf(10); i >= 0; i = value.indexOf(10, i + 1)) events++;
      if (chunks % 8 === 0) peak = Math.max(peak, rss());
    }
    peak = Math.max(peak, rss());
  } while (cursor);
  return { events, seconds: (performance.now() - started) / 1000, peak };
}

/**
 * The app on 127.0.0.1 (a free port), its per-minute caps on a clock that moves a minute per
 * call, so the benchmark's calls are never refused.
 */
export function serveUncapped(deps: Deps) {
  let clock = Date.now();
  const tick = () => {
    clock += 61_000;
    return clock;
  };
  deps.limiter = new RateLimiter(new MemoryCounterStore(tick), null, tick);
  return createApp(deps).listen({ hostname: "127.0.0.1", port: 0, idleTimeout: 255 });
}
