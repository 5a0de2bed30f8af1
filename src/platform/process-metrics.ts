import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics (prom-client). Events counted on the request path are process-wide (one
 * registry, like the process and runtime metrics); figures read from a running app's parts
 * (usage recorder, render pool, queues) are collected per app when scraped (`appMetrics` in
 * ./index.ts). docs/metrics.md lists every metric with example alerts.
 */
export const processRegistry = new Registry();

/** process_* (CPU, resident memory, open fds) and nodejs_* (heap, event-loop lag) */
collectDefaultMetrics({ register: processRegistry });

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpDuration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Requests answered (_count) and the time from each one's arrival to its response being handed to the runtime, by route pattern, method and status",
  labelNames: ["route", "method", "status"] as const,
  buckets: SECONDS,
  registers: [processRegistry],
});

export const quotaDecisions = new Counter({
  name: "quota_decisions_total",
  help: "Daily quota decisions on metered requests: allowed, limited (429) or failed_open (the counter store did not answer; served unenforced)",
  labelNames: ["bucket", "outcome"] as const,
  registers: [processRegistry],
});

export const counterStoreCalls = new Counter({
  name: "counter_store_calls_total",
  help: "Calls to the remote counter store: ok, error (failed or timed out) or skipped (circuit breaker open)",
  labelNames: ["outcome"] as const,
  registers: [processRegistry],
});

export const counterStoreDuration = new Histogram({
  name: "counter_store_call_duration_seconds",
  help: "Duration of calls to the remote counter store (answered or failed)",
  buckets: SECONDS,
  registers: [processRegistry],
});

export const renderDuration = new Histogram({
  name: "render_duration_seconds",
  help: "PNG/WebP renders from queueing to the bytes (cache misses only), by format",
  labelNames: ["format"] as const,
  buckets: SECONDS,
  registers: [processRegistry],
});

export const renderRefused = new Counter({
  name: "render_busy_total",
  help: "Renders refused with 503 render_busy: queue (would wait past RENDER_QUEUE_MS) or timeout (stopped after RENDER_TIMEOUT_MS)",
  labelNames: ["reason"] as const,
  registers: [processRegistry],
});

/**
 * The child of a labelled metric for one label combination, looked up once and kept under
 * `key`: `inc()` / `observe()` on it hash no labels, so the request path stays cheap.
 */
export function labelled<L, C>(metric: { labels(labels: L): C }) {
  const children = new Map<string, C>();
  return (key: string, labels: L): C => {
    let child = children.get(key);
    if (child === undefined) {
      child = metric.labels(labels);
      children.set(key, child);
    }
    return child;
  };
}
