import { Elysia, t } from "elysia";
import { Counter, Gauge, Registry } from "prom-client";
import type { AssetService } from "../assets/service";
import type { EnrichmentService } from "../catalog/enrichment/service";
import type { CatalogService } from "../catalog/service";
import { hasBearerToken } from "../guard";
import { ErrorBody } from "../http/errors";
import { unauthenticated } from "../platform/domain-errors";
import { processRegistry } from "../platform/process-metrics";
import type { RecorderStats } from "../usage/log/recorder";

export interface MetricsDeps {
  catalog: Pick<CatalogService, "size">;
  enrichment: Pick<EnrichmentService, "backlog">;
  assets: Pick<AssetService, "poolStats">;
  /** the usage recorder's counts (usage/log/recorder.ts) */
  usageStats: () => RecorderStats;
}

/**
 * Figures read from this app's parts when scraped: nothing is counted on the request path. A
 * counter read from a running total is set to it (prom-client counters only go up: reset, then
 * inc by the total).
 */
export function appMetrics(deps: MetricsDeps): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, read: () => number | null | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read() ?? 0);
      },
    });
  const total = (name: string, help: string, read: () => number | null | undefined) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read() ?? 0);
      },
    });
  const usage = deps.usageStats;
  total(
    "usage_events_recorded_total",
    "Usage events handed to the recorder (one per metered request)",
    () => usage()?.recorded,
  );
  total(
    "usage_events_written_total",
    "Usage events appended to the usage store",
    () => usage()?.written,
  );
  total(
    "usage_events_spilled_total",
    "Usage events spilled to the local spill file while the store failed or lagged",
    () => usage()?.spilled,
  );
  total(
    "usage_events_replayed_total",
    "Spilled usage events written to the store since",
    () => usage()?.replayed,
  );
  total(
    "usage_events_dropped_total",
    "Usage events lost: neither written nor spilled (disk failure)",
    () => usage()?.dropped,
  );
  total(
    "usage_write_failures_total",
    "Failed writes of usage event batches (retried)",
    () => usage()?.failures,
  );
  gauge(
    "usage_events_buffered",
    "Usage events in memory, not written yet",
    () => usage()?.buffered,
  );
  gauge(
    "usage_spill_bytes",
    "Bytes of usage spill files waiting for their replay (bounded by USAGE_SPILL_MAX_MB)",
    () => usage()?.spillBytes,
  );
  gauge(
    "usage_spill_files",
    "Usage spill files waiting for their replay",
    () => usage()?.spillFiles,
  );
  gauge(
    "render_queue_length",
    "Renders waiting for a render worker",
    () => deps.assets.poolStats()?.queued,
  );
  gauge("render_workers", "Render worker threads running", () => deps.assets.poolStats()?.workers);
  gauge(
    "enrichment_backlog",
    "Brand enrichment jobs queued or running",
    () => deps.enrichment.backlog,
  );
  gauge("catalog_brands", "Catalog entries loaded", () => deps.catalog.size);
  return registry;
}

const notAllowed = () =>
  unauthenticated(
    "unauthorized",
    "Pass the metrics token as Authorization: Bearer <METRICS_TOKEN>.",
  );

/**
 * GET /metrics in the Prometheus text format, for a scraper holding METRICS_TOKEN (the route
 * exists only when it is set). docs/metrics.md lists the metrics and example alerts.
 */
export function metricsController(deps: MetricsDeps & { token: string }) {
  const app = appMetrics(deps);
  return new Elysia({ tags: ["health"] }).get(
    "/metrics",
    async ({ request, set }) => {
      if (!hasBearerToken(request, deps.token)) throw notAllowed();
      const merged = Registry.merge([processRegistry, app]);
      set.headers["content-type"] = merged.contentType;
      set.headers["cache-control"] = "no-store";
      return await merged.metrics();
    },
    {
      response: {
        200: t.String({ description: "Prometheus text exposition format 0.0.4" }),
        401: ErrorBody,
      },
      detail: {
        summary: "Prometheus metrics (operators)",
        description:
          "Requests and latency by route and status, quota decisions, counter store calls, usage events, renders, queues, process memory and event-loop lag, in the Prometheus text format. Needs Authorization: Bearer <METRICS_TOKEN>; without METRICS_TOKEN the route does not exist (404). See docs/metrics.md.",
        security: [{ bearer: [] }],
        responses: {
          200: {
            description: "The metrics",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          401: {
            description: "unauthorized: the metrics token is missing or wrong",
            content: { "application/json": { schema: ErrorBody } },
          },
        },
      },
    },
  );
}
