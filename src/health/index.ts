import { Elysia, t } from "elysia";
import type { CatalogService } from "../catalog/service";
import type { Store } from "../store";

const readiness = (description: string) =>
  t.Object(
    {
      status: t.Union([t.Literal("ready"), t.Literal("not_ready")]),
      catalog: t.Object({
        loaded: t.Boolean(),
        brands: t.Integer({ description: "Catalog entries loaded" }),
        version: t.Union([t.String(), t.Null()], { description: "null until a catalog is loaded" }),
      }),
      store: t.Object({
        kind: t.Union([t.Literal("embedded"), t.Literal("mongodb")]),
        reachable: t.Boolean(),
      }),
    },
    { description },
  );

/** GET /healthz (process up) and GET /readyz (catalog loaded, stores reachable). Both public. */
export function healthController(deps: { catalog: CatalogService; store: Store }) {
  return new Elysia({ tags: ["health"] })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: t.Object({ status: t.Literal("ok") }, { description: "The process is up" }),
      detail: { summary: "Liveness", security: [] },
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
      {
        response: {
          200: readiness("Ready: the catalog is loaded and the store answers"),
          503: readiness("Not ready: no catalog loaded yet, or the store does not answer"),
        },
        detail: { summary: "Readiness: catalog loaded and stores reachable", security: [] },
      },
    );
}
