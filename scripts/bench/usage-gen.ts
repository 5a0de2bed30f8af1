/**
 * The usage events and dashboard queries of the usage benchmarks (usage-scale.ts,
 * analytics-dash.ts, usage-mongo.ts): a fixed pseudo-random sequence, so every run makes the same
 * events, batched as the service's recorder batches them.
 *
 * Events: 7 buckets (or svg only), 5 keys, 200 brands (a few popular), 304/404/500 answers,
 * folded 429 bursts, misses on the 404s, latencies log-normal around 1.5 ms with a slow tail,
 * spread evenly in time from..to. Batches: the events of each flush window (`flushMs` of their
 * time, 250 ms as USAGE_FLUSH_MS) per account, as the recorder makes them: traffic of a few
 * events a second gives a batch per event, a busy minute batches of hundreds.
 */
import { createApp } from "../../src/app";
import type { Deps } from "../../src/deps";
import { MemoryCounterStore } from "../../src/quota/memory-store";
import { RateLimiter } from "../../src/quota/rate-limit";
import { type Batch, dayNo, emptyBatch, mintQ, NONE } from "../../src/usage/log/batch";
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
/** a pick by weight from a cumulative table */
function picker<T>(list: readonly T[], weights: readonly number[]): () => T {
  const total = weights.reduce((a, b) => a + b, 0);
  const cum: number[] = [];
  let s = 0;
  for (const w of weights) {
    s += w / total;
    cum.push(s);
  }
  return () => {
    const r = rand();
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < r) lo = mid + 1;
      else hi = mid;
    }
    return list[lo] as T;
  };
}

const BUCKET_LIST = ["svg", "png", "webp", "catalog", "search", "domain", "batch"] as const;
const BUCKET_WEIGHTS = [50, 20, 5, 10, 8, 5, 2];
const VARIANTS = ["mono", "color", "icon", "wordmark"];

export interface GenOptions {
  /** the measured account */
  accountId: string;
  /** its keys (the others': `key-<account>`) */
  keys: string[];
  count: number;
  from: number;
  to: number;
  /** accounts in all: the others are `bench-account-<n>` */
  accounts: number;
  /** the measured account's share of the events (default: 1 / accounts) */
  share?: number;
  /** brands (default 200), variants of the image routes (default 4) */
  brands?: number;
  variants?: number;
  /** the svg route only (dense traffic of an image API) */
  svgOnly?: boolean;
  /** the recorder's flush window (USAGE_FLUSH_MS) */
  flushMs?: number;
  /** events per yielded list of batches (an append) */
  perAppend?: number;
}

/**
 * The events in time order, as the recorder batches them (per flush window and account), a list
 * of about `perAppend` events at a time (one append, as a busy writer takes them).
 */
export function* usageFlushes(o: GenOptions): Generator<Batch[]> {
  const span = o.to - o.from;
  const flushMs = o.flushMs ?? 250;
  const perAppend = o.perAppend ?? 20_000;
  const every = Math.max(1, Math.round(1 / (o.share ?? 1 / o.accounts)));
  const brands = Array.from({ length: o.brands ?? 200 }, (_, i) => `brand-${i}`);
  const pickBrand = picker(
    brands,
    brands.map((_, i) => 1 / (i + 1)),
  );
  const pickBucket = o.svgOnly ? () => "svg" as const : picker(BUCKET_LIST, BUCKET_WEIGHTS);
  const variants = VARIANTS.slice(0, o.variants ?? 4);
  let out: Batch[] = [];
  let outEvents = 0;
  // the window under way: per account, its events' fields
  let window = -1;
  type Row = {
    at: number;
    key: string;
    bucket: number;
    route: string;
    slug: string | null;
    variant: string | null;
    format: string | null;
    status: number;
    lat: number;
    count: number;
    miss: string | null;
  };
  let open = new Map<string, Row[]>();
  const close = () => {
    for (const [account, rows] of open) {
      const b = emptyBatch(account, rows.length);
      const ids = new Map<string, number>();
      const ref = (s: string | null) => {
        if (s === null) return NONE;
        let i = ids.get(s);
        if (i === undefined) {
          i = b.strings.length;
          b.strings.push(s);
          ids.set(s, i);
        }
        return i;
      };
      const tier = ref("pro");
      let counted = false;
      rows.forEach((r, i) => {
        b.at[i] = r.at;
        b.key[i] = ref(r.key);
        b.tier[i] = tier;
        b.route[i] = ref(r.route);
        b.slug[i] = ref(r.slug);
        b.variant[i] = ref(r.variant);
        b.format[i] = ref(r.format);
        b.bucket[i] = r.bucket;
        b.status[i] = r.status;
        b.lat[i] = r.lat;
        if (r.count > 1) counted = true;
        if (r.miss) {
          b.miss ??= new Array(rows.length).fill(null);
          b.miss[i] = [ref(r.miss)];
        }
      });
      if (counted) b.count = Uint32Array.from(rows, (r) => r.count);
      b.t0 = b.at[0] as number;
      b.q = mintQ();
      out.push(b);
      outEvents += rows.length;
    }
    open = new Map();
  };
  for (let j = 0; j < o.count; j++) {
    const at = o.from + Math.floor((span * j) / o.count);
    const w = Math.floor(at / flushMs);
    // a window ends: its batches are made; a UTC day ends a batch too
    if (w !== window) {
      close();
      window = w;
      if (outEvents >= perAppend) {
        yield out;
        out = [];
        outEvents = 0;
      }
    }
    const bucketName = pickBucket();
    const bucket = BUCKET_LIST.indexOf(bucketName);
    const r = rand();
    const status = r < 0.03 ? 404 : r < 0.08 ? 304 : r < 0.1 ? 429 : r < 0.102 ? 500 : 200;
    const image = bucketName === "svg" || bucketName === "png" || bucketName === "webp";
    const slug = bucketName === "search" ? null : pickBrand();
    const latency = Math.exp(Math.log(1.5) + 0.8 * Math.sqrt(-2 * Math.log(rand() || 1e-9)));
    const other = o.accounts > 1 ? 1 + (j % (o.accounts - 1)) : 0;
    const mine = j % every === 0;
    const account = mine ? o.accountId : `bench-account-${other}`;
    let rows = open.get(account);
    if (!rows) {
      rows = [];
      open.set(account, rows);
    } else if (dayNo((rows[0] as Row).at) !== dayNo(at)) {
      // a window across midnight: the new day's events start a batch of their own
      close();
      rows = [];
      open.set(account, rows);
    }
    rows.push({
      at,
      key: mine ? (o.keys[j % o.keys.length] as string) : `key-${other}`,
      bucket,
      route: image ? `/v1/${bucketName}/:slug` : `/v1/${bucketName}`,
      slug,
      variant: image ? (variants[j % variants.length] as string) : null,
      format: image ? bucketName : null,
      status,
      lat: Math.round(latency * 1000),
      count: status === 429 ? 1 + (j % 20) : 1,
      miss: status === 404 ? `slug:missing-${j % 500}` : null,
    });
  }
  close();
  if (out.length > 0) yield out;
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
 * then `reads` calls; one line each with p50/p95/p99 and the first call. Returns the worst p99.
 */
export async function timeQueries(get: Get, reads: number, now = Date.now()): Promise<number> {
  const today = new Date(now).toISOString().slice(0, 10);
  const firstDay = new Date(now - 365 * DAY_MS).toISOString().slice(0, 10);
  const lastWeek = new Date(now - 6 * DAY_MS).toISOString().slice(0, 10);
  let worst = 0;
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
    worst = Math.max(worst, percentile(ms, 99));
    console.log(
      `  ${label.padEnd(40)} p50 ${p(50)} ms  p95 ${p(95)} ms  p99 ${p(99)} ms  first ${fmt(firstMs, 0)} ms`,
    );
  }
  return worst;
}

/**
 * The account's events through GET /v1/analytics/events from `from` to `to` (UTC days), pages of
 * 50,000 (at most `max` events), each body read as it arrives; `rss` sampled as it goes.
 * Resolves to the events, seconds and the peak of `rss`.
 */
export async function exportAll(
  get: Get,
  rss: () => number,
  now = Date.now(),
  opts: { from?: string; to?: string; max?: number } = {},
): Promise<{ events: number; seconds: number; peak: number }> {
  const to = opts.to ?? new Date(now).toISOString().slice(0, 10);
  const from = opts.from ?? new Date(now - 365 * DAY_MS).toISOString().slice(0, 10);
  const max = opts.max ?? Number.POSITIVE_INFINITY;
  let peak = rss();
  let events = 0;
  let cursor: string | null = null;
  const started = performance.now();
  do {
    const r = await get(
      `/v1/analytics/events?from=${from}&to=${to}&limit=50000${cursor ? `&cursor=${cursor}` : ""}`,
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
  } while (cursor && events < max);
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
