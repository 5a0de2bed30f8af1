/**
 * A fixed set of usage events in the shape the recorder writes them (a fixed pseudo-random
 * sequence: every call gives the same events, ids included), and the analytics queries asked of
 * it. `tests/fixtures/usage-recorded/` holds what the service answered for them when they were
 * written by the per-event log (JSON rows of usage_events and per-cell projections), and
 * databases of that layout (embedded and MongoDB) with these events: the tests check that the
 * present log answers the same, and that an older database is migrated without loss.
 *
 * Three accounts over three UTC days: `acc-busy` (70 brands on its first day, past the 50 a
 * period keeps; misses; folded 429 bursts; 499 and 5xx; latencies over every bin; a tier change
 * on the last day), `acc-small` (a few events, an upper-case and an odd slug), `acc-bearer`
 * (bearer-token calls: no key).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Principal } from "../../src/quota/principal";
import { exportPage } from "../../src/usage/analytics/export";
import { rankedMisses } from "../../src/usage/analytics/misses";
import { usageSeries, wantsSeries } from "../../src/usage/analytics/series";
import { usageHistory } from "../../src/usage/analytics/service";
import type { UsageEvent } from "../../src/usage/event";
import { BatchBuilder, bucketIndex, latencyUs } from "../../src/usage/log/batch";
import type { UsageLog } from "../../src/usage/log/port";

export const RECORDED_NOW = new Date("2026-01-08T12:00:00Z");
export const RECORDED_DAYS = ["2026-01-05", "2026-01-06", "2026-01-07"] as const;
export const RECORDED_ACCOUNTS = ["acc-busy", "acc-small", "acc-bearer"] as const;

/** mulberry32 */
function prng(seed: number) {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

const BUCKETS = ["svg", "png", "webp", "catalog", "search", "domain", "batch"] as const;
const ROUTES: Record<(typeof BUCKETS)[number], string> = {
  svg: "/v1/svg/:slug",
  png: "/v1/png/:slug",
  webp: "/v1/webp/:slug",
  catalog: "/v1/catalog/:slug",
  search: "/v1/search",
  domain: "/v1/brand",
  batch: "/v1/catalog/batch",
};

/** The events, in the order they were metered (ids ascending with their times). */
export function recordedEvents(): UsageEvent[] {
  const rand = prng(20260105);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const out: UsageEvent[] = [];
  let counter = 0;
  const idOf = (at: number) => {
    counter++;
    // a UUIDv7: 48-bit time, version 7, 12 bits of sequence, variant 10, 62 random bits
    const r1 = Math.floor(rand() * 0x4000);
    const r2 = Math.floor(rand() * 0x1000000);
    const r3 = Math.floor(rand() * 0x1000000);
    const t = hex(at, 12);
    return `${t.slice(0, 8)}-${t.slice(8)}-7${hex(counter & 0xfff, 3)}-${hex(0x8000 | r1, 4)}-${hex(r2, 6)}${hex(r3, 6)}`;
  };
  const busyBrands = Array.from({ length: 70 }, (_, i) => `brand-${i}`);
  for (const [d, day] of RECORDED_DAYS.entries()) {
    const start = Date.parse(`${day}T00:00:00Z`);
    const perDay = d === 0 ? 260 : 90;
    for (let i = 0; i < perDay; i++) {
      // spread over the day, clustered in a few hours
      const hour = i % 5 === 0 ? Math.floor(rand() * 24) : [9, 10, 14][i % 3];
      const at = start + (hour as number) * 3_600_000 + Math.floor(rand() * 3_600_000);
      const who = rand();
      const accountId = who < 0.75 ? "acc-busy" : who < 0.9 ? "acc-small" : "acc-bearer";
      const bucket = pick(BUCKETS);
      const image = bucket === "svg" || bucket === "png" || bucket === "webp";
      const r = rand();
      let status = r < 0.06 ? 404 : r < 0.1 ? 304 : r < 0.14 ? 429 : r < 0.16 ? 500 : 200;
      if (r > 0.99) status = 499;
      else if (r > 0.985) status = 503;
      let slug: string | null =
        bucket === "search"
          ? null
          : accountId === "acc-busy"
            ? // the first day names every brand, the later ones a few
              d === 0
              ? (busyBrands[i % busyBrands.length] as string)
              : (busyBrands[Math.floor(rand() * 8)] as string)
            : pick(["GitHub", "stripe", "a.b c", "ünï-code"]);
      if (bucket === "domain" && status === 404) slug = null;
      const miss =
        status === 404
          ? bucket === "domain"
            ? [`domain:missing-${i % 7}.test`]
            : bucket === "batch"
              ? [`slug:gone-${i % 3}`, `slug:lost-${i % 2}`]
              : [`slug:${slug ?? "x"}`]
          : bucket === "search" && r > 0.9
            ? [`query:acme corp ${i % 4}`]
            : undefined;
      const tier =
        accountId === "acc-busy"
          ? d === 2 && hour !== undefined && hour >= 12
            ? "enterprise"
            : "pro"
          : accountId === "acc-small"
            ? "free"
            : "internal";
      // log-normal around 1.5 ms with a slow tail, a few very fast and very slow
      const u = rand();
      const latency =
        u < 0.03
          ? 0.01
          : u > 0.98
            ? 20_000 + Math.floor(rand() * 200_000)
            : Math.exp(Math.log(1.5) + 1.2 * Math.sqrt(-2 * Math.log(rand() || 1e-9)));
      const ts = new Date(at).toISOString();
      const e: UsageEvent = {
        id: "",
        ts,
        day,
        accountId,
        keyId:
          accountId === "acc-bearer"
            ? ""
            : accountId === "acc-busy"
              ? pick(["kb1", "kb2", "kb3"])
              : "ks1",
        tier,
        bucket,
        route: ROUTES[bucket],
        slug,
        variant: image ? pick(["mono", "color", "icon", null]) : null,
        status,
        latencyMs: Math.round(latency * 100) / 100,
      } as UsageEvent;
      if (image) e.format = bucket;
      if (miss) e.miss = miss;
      if (status === 429) e.count = 1 + Math.floor(rand() * 30);
      out.push(e);
    }
  }
  out.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  // ids minted in time order, then each event's fields in the stored order
  return out.map((e) => {
    const { id: _id, ts, day, ...rest } = e;
    const ordered: Record<string, unknown> = { id: idOf(Date.parse(ts)), ts, day };
    for (const k of ["accountId", "keyId", "tier", "bucket", "route", "slug", "variant"] as const)
      ordered[k] = rest[k];
    if (rest.format !== undefined) ordered.format = rest.format;
    if (rest.miss !== undefined) ordered.miss = rest.miss;
    ordered.status = rest.status;
    ordered.latencyMs = rest.latencyMs;
    if (rest.count !== undefined) ordered.count = rest.count;
    return ordered as unknown as UsageEvent;
  });
}

/** The analytics queries asked of each account (query strings of GET /v1/analytics/usage). */
export const RECORDED_QUERIES: string[] = [
  "from=2026-01-04&to=2026-01-08",
  "from=2026-01-05&to=2026-01-07&bucket=svg",
  "from=2026-01-05&to=2026-01-07&granularity=day",
  "from=2026-01-05&to=2026-01-07&group_by=bucket",
  "from=2026-01-05&to=2026-01-07&group_by=brand&limit=5",
  "from=2026-01-05&to=2026-01-07&group_by=brand,status_class&limit=12",
  "from=2026-01-05&to=2026-01-07&group_by=key,bucket",
  "from=2026-01-05&to=2026-01-07&group_by=variant,format",
  "from=2026-01-05&to=2026-01-07&group_by=status",
  "from=2026-01-05&to=2026-01-07&brand=brand-3&group_by=key",
  "from=2026-01-05&to=2026-01-07&brand=(other)&group_by=status_class",
  "from=2026-01-05&to=2026-01-07&brand=github",
  "from=2026-01-05&to=2026-01-07&key=kb2&group_by=brand&limit=3",
  "from=2026-01-05&to=2026-01-07&bucket=png&group_by=variant",
  "from=2026-01-05&to=2026-01-05&granularity=hour&group_by=bucket",
  "from=2026-01-05&to=2026-01-06&granularity=hour&group_by=brand&limit=4",
  "from=2026-01-07&to=2026-01-07&granularity=hour&brand=brand-1",
];

const FIXTURE = join(import.meta.dir, "../fixtures/usage-recorded");
export const readAnswers = (path: string) =>
  JSON.parse(gunzipSync(readFileSync(join(FIXTURE, path))).toString()) as Record<
    string,
    Record<string, unknown>
  >;

const parse = (q: string) => {
  const o: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(q)) o[k] = k === "limit" ? Number(v) : v;
  return o;
};
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** What the service answers for the recorded queries (the fixture's shape). */
export async function recordedAnswers(store: UsageLog) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const acc of RECORDED_ACCOUNTS) {
    const p = { accountId: acc, tier: "pro", keyId: null, limits: null } as Principal;
    const a: Record<string, unknown> = {};
    for (const q of RECORDED_QUERIES) {
      const query = parse(q);
      a[q] = wantsSeries(query)
        ? await usageSeries(store, p, query, RECORDED_NOW)
        : await usageHistory(store, p, query, RECORDED_NOW);
    }
    a.misses = await rankedMisses(store, acc, { from: "2026-01-01" }, RECORDED_NOW);
    const all: string[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await exportPage(
        store,
        acc,
        { from: "2026-01-01", to: "2026-01-08", limit: 37, cursor },
        30_000,
        RECORDED_NOW,
      );
      const text = await new Response(page.body).text();
      all.push(...text.split("\n").filter(Boolean));
      if (!page.next) break;
      cursor = page.next;
      cursors.push(cursor);
    }
    const csv = await exportPage(
      store,
      acc,
      { from: "2026-01-01", to: "2026-01-08", limit: 50000, format: "csv" },
      30_000,
      RECORDED_NOW,
    );
    const csvText = await new Response(csv.body).text();
    const noIds = all.map((l) => {
      const { id: _id, ...rest } = JSON.parse(l);
      return JSON.stringify(rest);
    });
    a.export = {
      events: all.length,
      cursors,
      ndjson: sha(`${all.join("\n")}\n`),
      ndjsonWithoutIds: sha(`${noIds.join("\n")}\n`),
      csv: sha(csvText),
      csvHead: csvText.split("\n").slice(0, 3),
    };
    out[acc] = a;
  }
  out.allMisses = await rankedMisses(
    store,
    null,
    { from: "2026-01-01", limit: 1000 },
    RECORDED_NOW,
  );
  return out;
}

/** The recorded events as the recorder batches them: ids derived from batch and position. */
export function freshBatches(events: UsageEvent[]) {
  const b = new BatchBuilder();
  for (const e of events)
    b.add(e.accountId, Date.parse(e.ts), {
      key: b.ref(e.keyId),
      tier: b.ref(e.tier),
      route: b.ref(e.route),
      slug: b.ref(e.slug),
      variant: b.ref(e.variant),
      format: b.ref(e.format ?? null),
      bucket: bucketIndex(e.bucket),
      status: e.status,
      lat: latencyUs(e.latencyMs),
      count: e.count ?? 1,
      miss: e.miss?.map((m) => b.ref(m)) ?? null,
    });
  return b.done();
}
