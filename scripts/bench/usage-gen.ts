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
import { RateLimiter } from "../../src/quota/rate-limit";
import { MemoryCounterStore } from "../../src/quota/store/memory";
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

/** list[i], made by `make` the first time. */
function memo<T>(list: T[], i: number, make: () => T): T {
  let v = list[i];
  if (v === undefined) {
    v = make();
    list[i] = v;
  }
  return v;
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
  const brandIndex = picker(
    brands.map((_, i) => i),
    brands.map((_, i) => 1 / (i + 1)),
  );
  const bucketIndex = o.svgOnly
    ? () => 0
    : picker(
        BUCKET_LIST.map((_, i) => i),
        BUCKET_WEIGHTS,
      );
  const variants = VARIANTS.slice(0, o.variants ?? 4);
  // the strings events refer to, in one table (numbers per event: no object or string made)
  const table: string[] = ["pro", ...o.keys, ...brands, ...variants];
  const KEY0 = 1;
  const BRAND0 = KEY0 + o.keys.length;
  const VARIANT0 = BRAND0 + brands.length;
  const more = new Map<string, number>();
  const ref = (s: string): number => {
    let i = more.get(s);
    if (i === undefined) {
      i = table.length;
      table.push(s);
      more.set(s, i);
    }
    return i;
  };
  const ROUTE = BUCKET_LIST.map((b) =>
    ref(b === "svg" || b === "png" || b === "webp" ? `/v1/${b}/:slug` : `/v1/${b}`),
  );
  const FORMAT = BUCKET_LIST.map((b) => (b === "svg" || b === "png" || b === "webp" ? ref(b) : -1));
  const names: string[] = [];
  const keyRefs: number[] = [];
  const missRefs: number[] = [];
  // an event: at, key, bucket, slug, variant, status, lat, count, miss (string table indexes, -1 null)
  const F = 9;
  let out: Batch[] = [];
  let outEvents = 0;
  let window = -1;
  let open = new Map<string, number[]>();
  const close = () => {
    for (const [account, ev] of open) {
      const n = ev.length / F;
      const b = emptyBatch(account, n);
      // the batch's strings: table index -> batch index
      const local: number[] = [];
      const idx: number[] = [];
      const loc = (t: number): number => {
        if (t < 0) return NONE;
        for (let k = 0; k < idx.length; k++) if (idx[k] === t) return local[k] as number;
        idx.push(t);
        local.push(b.strings.length);
        b.strings.push(table[t] as string);
        return b.strings.length - 1;
      };
      const tier = loc(0);
      let counted = false;
      for (let i = 0; i < n; i++) {
        const o_ = i * F;
        const bucket = ev[o_ + 2] as number;
        b.at[i] = ev[o_] as number;
        b.key[i] = loc(ev[o_ + 1] as number);
        b.tier[i] = tier;
        b.route[i] = loc(ROUTE[bucket] as number);
        b.slug[i] = loc(ev[o_ + 3] as number);
        b.variant[i] = loc(ev[o_ + 4] as number);
        b.format[i] = loc(FORMAT[bucket] as number);
        b.bucket[i] = bucket;
        b.status[i] = ev[o_ + 5] as number;
        b.lat[i] = ev[o_ + 6] as number;
        if ((ev[o_ + 7] as number) > 1) counted = true;
        const miss = ev[o_ + 8] as number;
        if (miss >= 0) {
          b.miss ??= new Array(n).fill(null);
          b.miss[i] = [loc(miss)];
        }
      }
      if (counted) {
        const count = new Uint32Array(n);
        for (let i = 0; i < n; i++) count[i] = ev[i * F + 7] as number;
        b.count = count;
      }
      b.t0 = b.at[0] as number;
      b.q = mintQ();
      out.push(b);
      outEvents += n;
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
    const bucket = bucketIndex();
    const r = rand();
    const status = r < 0.03 ? 404 : r < 0.08 ? 304 : r < 0.1 ? 429 : r < 0.102 ? 500 : 200;
    const image = bucket < 3;
    const latency = Math.exp(Math.log(1.5) + 0.8 * Math.sqrt(-2 * Math.log(rand() || 1e-9)));
    const other = o.accounts > 1 ? 1 + (j % (o.accounts - 1)) : 0;
    const mine = j % every === 0;
    const account = mine ? o.accountId : memo(names, other, () => `bench-account-${other}`);
    let ev = open.get(account);
    if (!ev) {
      ev = [];
      open.set(account, ev);
    } else if (dayNo(ev[0] as number) !== dayNo(at)) {
      // a window across midnight: the new day's events start a batch of their own
      close();
      ev = [];
      open.set(account, ev);
    }
    ev.push(
      at,
      mine ? KEY0 + (j % o.keys.length) : memo(keyRefs, other, () => ref(`key-${other}`)),
      bucket,
      BUCKET_LIST[bucket] === "search" ? -1 : BRAND0 + brandIndex(),
      image ? VARIANT0 + (j % variants.length) : -1,
      status,
      Math.round(latency * 1000),
      status === 429 ? 1 + (j % 20) : 1,
      status === 404 ? memo(missRefs, j % 500, () => ref(`slug:missing-${j % 500}`)) : -1,
    );
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
