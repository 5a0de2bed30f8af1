import { Elysia, t } from "elysia";
import type { CatalogService } from "../catalog/service";
import type { Drain } from "../http/drain";
import type { QuotaService } from "../quota/service";
import type { UsageRecorder } from "../usage/log/recorder";

const readiness = (description: string) =>
  t.Object(
    {
      status: t.Union([t.Literal("ready"), t.Literal("not_ready")]),
      draining: t.Boolean({
        description:
          "true once the service is shutting down (SIGTERM): not ready, whatever else holds",
      }),
      catalog: t.Object({
        loaded: t.Boolean(),
        brands: t.Integer({ description: "Catalog entries loaded" }),
        version: t.Union([t.String(), t.Null()], { description: "null until a catalog is loaded" }),
      }),
      store: t.Object({
        kind: t.Union([t.Literal("embedded"), t.Literal("mongodb")]),
        reachable: t.Boolean(),
      }),
      counters: t.Object(
        {
          kind: t.Union([t.Literal("memory"), t.Literal("upstash")]),
          state: t.Union([t.Literal("ok"), t.Literal("degraded")], {
            description:
              "degraded: the quota counter store does not answer and quotas fail open (readiness is not affected)",
          }),
          since: t.Union([t.String({ format: "date-time" }), t.Null()], {
            description: "when the degraded spell began; null when ok",
          }),
        },
        { description: "The quota counter store's condition" },
      ),
      usage: t.Object(
        {
          state: t.Union([t.Literal("ok"), t.Literal("degraded")], {
            description:
              "degraded: usage events pile up in memory, neither written to the store nor spilled to disk (a full disk); not ready until a write succeeds",
          }),
          since: t.Union([t.String({ format: "date-time" }), t.Null()]),
          held: t.Integer({ description: "Usage events in memory, not written yet" }),
          backlog: t.Optional(
            t.Object(
              {
                spillFiles: t.Integer({
                  description:
                    "Spill files not replayed yet (replayed in the background while ready)",
                }),
                spillBytes: t.Integer({
                  description: "Their bytes, bounded by USAGE_SPILL_MAX_MB",
                }),
                replaying: t.Boolean({ description: "A spill file is being replayed" }),
                pendingBatches: t.Integer({
                  description:
                    "Batches in the log not counted into the analytics yet (MongoDB; 0 on the embedded store, which counts a batch in its own transaction)",
                }),
              },
              {
                description:
                  "Usage events kept but not in the analytics yet; the instance is ready meanwhile",
              },
            ),
          ),
        },
        { description: "The usage event recorder's condition" },
      ),
    },
    { description },
  );

/**
 * GET /healthz (process up) and GET /readyz (catalog loaded, stores reachable; the body also
 * states the quota counter store's condition, which never makes it 503). Both public.
 */
export function healthController(deps: {
  catalog: CatalogService;
  /** the store of deps.ts: its kind and whether it answers */
  store: { kind: "embedded" | "mongodb"; ping(): Promise<boolean> };
  quota: Pick<QuotaService, "condition">;
  drain: Pick<Drain, "draining">;
  usage: Pick<UsageRecorder, "condition">;
}) {
  return new Elysia({ tags: ["health"] })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }, { description: "The process is up" }),
      detail: { summary: "Liveness", security: [] },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const draining = deps.drain.draining;
        const storeUp = await deps.store.ping();
        const usage = deps.usage.condition?.() ?? { state: "ok" as const, since: null, held: 0 };
        const ready = !draining && deps.catalog.loaded && storeUp && usage.state === "ok";
        if (!ready) set.status = 503;
        return {
          status: ready ? ("ready" as const) : ("not_ready" as const),
          draining,
          catalog: {
            loaded: deps.catalog.loaded,
            brands: deps.catalog.size,
            version: deps.catalog.version,
          },
          store: { kind: deps.store.kind, reachable: storeUp },
          // a degraded counter store does not make the service unready: quotas fail open
          counters: deps.quota.condition(),
          usage,
        };
      },
      {
        response: {
          200: readiness("Ready: the catalog is loaded and the store answers"),
          503: readiness(
            "Not ready: no catalog loaded yet, the store does not answer, usage events cannot be stored (usage.state degraded), or the service is shutting down (draining)",
          ),
        },
        detail: { summary: "Readiness: catalog loaded and stores reachable", security: [] },
      },
    );
}
