import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { freePort, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";
import { until } from "../support/wait";

/** GET /metrics: the Prometheus text format behind METRICS_TOKEN (docs/metrics.md). */

const TOKEN = "metrics-token-0123456789";

/** The value of the sample `name` whose labels include `labels` (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[3] ?? "";
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) return Number(m[4]);
  }
  return 0;
}

async function scrape(t: TestApp): Promise<string> {
  const r = await t.req("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
}

describe("without METRICS_TOKEN", () => {
  test("the route does not exist: 404", async () => {
    const t = await makeApp();
    const r = await t.req("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).toBe(404);
    await t.close();
  });
});

describe("with METRICS_TOKEN", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => t.close());

  test("no token or a wrong one: 401 in the error shape", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const r = await t.req("/metrics", { headers });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: "unauthorized", message: expect.any(String) });
    }
  });

  test("requests by route and status, with latency histograms", async () => {
    const key = await t.key("free");
    const before = await scrape(t);
    const route = { route: "/v1/svg/:slug", method: "GET" };
    for (let i = 0; i < 3; i++) expect((await t.get("/v1/svg/github", key)).status).toBe(200);
    await expectError(await t.get("/v1/svg/no-such-brand-xyz", key), 404, "service_not_found");
    await t.get("/no/such/route", key);
    // after-response hooks run once the response is handed over: wait for the last one
    let after = await scrape(t);
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    const unmatched = { route: "unmatched", method: "GET", status: "404" };
    await until(
      async () => {
        after = await scrape(t);
        return delta("http_request_duration_seconds_count", unmatched) >= 1;
      },
      4_000,
      "the unmatched request's duration sample",
      20,
    );
    expect(delta("http_request_duration_seconds_count", { ...route, status: "200" })).toBe(3);
    expect(delta("http_request_duration_seconds_count", { ...route, status: "404" })).toBe(1);
    expect(delta("http_request_duration_seconds_count", unmatched)).toBe(1);
    expect(
      delta("http_request_duration_seconds_bucket", { ...route, status: "200", le: "+Inf" }),
    ).toBe(3);
    expect(
      sample(after, "http_request_duration_seconds_sum", { ...route, status: "200" }),
    ).toBeGreaterThan(0);
  });

  test("quota decisions: allowed and limited", async () => {
    const key = await t.key("free");
    const before = await scrape(t);
    // free: 5 batch calls a day
    for (let i = 0; i < 7; i++) await t.post("/v1/catalog/batch", key, { slugs: ["github"] });
    const after = await scrape(t);
    const delta = (outcome: string) =>
      sample(after, "quota_decisions_total", { bucket: "batch", outcome }) -
      sample(before, "quota_decisions_total", { bucket: "batch", outcome });
    expect(delta("allowed")).toBe(5);
    expect(delta("limited")).toBe(2);
  });

  test("usage events, renders, queues, process memory and event-loop lag", async () => {
    const key = await t.key("pro");
    const before = await scrape(t);
    // a size no other test asks for: a cache miss, rendered by the pool
    expect((await t.get("/v1/png/github?size=333", key)).status).toBe(200);
    await t.deps.usage.flush();
    const after = await scrape(t);
    expect(
      sample(after, "render_duration_seconds_count", { format: "png" }) -
        sample(before, "render_duration_seconds_count", { format: "png" }),
    ).toBe(1);
    expect(sample(after, "usage_events_recorded_total")).toBeGreaterThan(
      sample(before, "usage_events_recorded_total"),
    );
    // refusals of one key in a row fold into one event, so written can be below recorded
    expect(sample(after, "usage_events_written_total")).toBeGreaterThan(
      sample(before, "usage_events_written_total"),
    );
    expect(sample(after, "usage_events_buffered")).toBe(0);
    expect(sample(after, "usage_events_dropped_total")).toBe(0);
    expect(sample(after, "catalog_brands")).toBe(t.deps.catalog.size);
    for (const name of [
      "render_queue_length",
      "enrichment_backlog",
      "render_busy_total",
      "usage_events_spilled_total",
    ])
      expect(after).toContain(`# TYPE ${name} `);
    expect(sample(after, "process_resident_memory_bytes")).toBeGreaterThan(10_000_000);
    expect(sample(after, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(after).toContain("# TYPE nodejs_eventloop_lag_p99_seconds gauge");
  });
});

describe("a counter store that does not answer", () => {
  test("failed-open decisions and counter store errors are counted", async () => {
    const port = await freePort(); // nothing listens there
    const t = await makeApp({
      METRICS_TOKEN: TOKEN,
      UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${port}`,
      UPSTASH_REDIS_REST_TOKEN: "t",
    });
    // the counter store's failures are logged (warn): kept out of the test output
    const logs = captureLogs();
    try {
      const key = await t.key("free");
      const before = await scrape(t);
      for (let i = 0; i < 5; i++) {
        // served without enforcement: the brand, and no limit headers
        const r = await t.get("/v1/catalog/github", key);
        expect(r.status).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBeNull();
        expect(((await r.json()) as { slug: string }).slug).toBe("github");
      }
      const after = await scrape(t);
      const delta = (name: string, labels: Record<string, string>) =>
        sample(after, name, labels) - sample(before, name, labels);
      expect(delta("quota_decisions_total", { bucket: "catalog", outcome: "failed_open" })).toBe(5);
      // 3 failures open the breaker; the calls after that are skipped
      expect(delta("counter_store_calls_total", { outcome: "error" })).toBeGreaterThanOrEqual(3);
      expect(
        delta("counter_store_calls_total", { outcome: "error" }) +
          delta("counter_store_calls_total", { outcome: "skipped" }),
      ).toBeGreaterThanOrEqual(5);
      expect(delta("counter_store_call_duration_seconds_count", {})).toBeGreaterThanOrEqual(3);
      expect(logs.lines.some((l) => String(l.msg).includes("counter store unavailable"))).toBe(
        true,
      );
    } finally {
      logs.restore();
      await t.close();
    }
  });
});
