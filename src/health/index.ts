import { Elysia, t } from "elysia";
import type { CatalogService } from "../catalog/service";
import type { Store } from "../store";

/** GET /healthz (process up) and GET /readyz (catalog loaded, stores reachable). */
export function healthController(deps: { catalog: CatalogService; store: Store }) {
  return new Elysia({ tags: ["health"] })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }),
      detail: { summary: "Liveness" },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const storeUp = await deps.store.ping();
        const ready = deps.catalog.loaded && storeUp;
        if (!ready) set.status = 503;
        return {
          status: ready ? ("ready" as const) : ("not_ready" as const),
          catalog: {
            loaded: deps.catalog.loaded,
            brands: deps.catalog.size,
            version: deps.catalog.version,
          },
          store: { kind: deps.store.kind, reachable: storeUp },
        };
      },
      { detail: { summary: "Readiness: catalog loaded and stores reachable" } },
    );
}
