import { Elysia, t } from "elysia";
import { type AuthDeps, authPlugin } from "../http/auth";
import { ApiError, notFound } from "../http/errors";
import { BATCH_SLUG_CAP } from "../quota/limits";
import {
  BatchBody,
  BatchResponse,
  ErrorBody,
  ListQuery,
  RateLimitedBody,
  ServiceListResponse,
  ServiceResponse,
} from "./model";
import type { CatalogService } from "./service";

const errors = {
  401: ErrorBody,
  422: ErrorBody,
  429: RateLimitedBody,
};

/** GET /v1/catalog, GET /v1/catalog/{slug}, POST /v1/catalog/batch */
export function catalogController(deps: AuthDeps & { catalog: CatalogService }) {
  const { catalog } = deps;
  return new Elysia({ prefix: "/v1/catalog", tags: ["catalog"] })
    .use(authPlugin(deps))
    .get("/", ({ query }) => catalog.list(query.limit, query.offset), {
      apiKey: true,
      query: ListQuery,
      response: { 200: ServiceListResponse, ...errors },
      detail: {
        summary: "List catalog entries",
        description:
          "One page of the catalog in id order (stable across catalog rebuilds). limit 1..200 (default 50), offset >= 0 (default 0); anything else is 422 validation_error. Not metered.",
      },
    })
    .post(
      "/batch",
      ({ body, principal }) => {
        const unique = [...new Set(body.slugs.map((s) => s.trim().toLowerCase()))];
        const cap = BATCH_SLUG_CAP[principal.tier];
        if (unique.length > cap)
          throw new ApiError(
            422,
            "batch_too_large",
            `At most ${cap} unique slugs per batch call on the ${principal.tier} tier (got ${unique.length}).`,
          );
        return catalog.batch(unique);
      },
      {
        metered: "batch",
        body: BatchBody,
        response: { 200: BatchResponse, ...errors },
        detail: {
          summary: "Resolve up to 10 (free) or 50 (paid, internal) slugs in one call",
          description:
            "Slugs are trimmed and lower-cased; duplicates count once. Unknown slugs map to null and are listed in notFound. Over the tier's cap: 422 batch_too_large. One call counts once against the batch bucket.",
        },
      },
    )
    .get(
      "/:slug",
      ({ params }) => {
        // Pre-serialized bytes of a view that matches ServiceResponse (every view of the
        // catalog is checked against the schema in tests/catalog/routes.test.ts).
        const json = catalog.viewJson(params.slug);
        if (json === null)
          throw notFound("service_not_found", `No catalog entry with slug "${params.slug}".`);
        return new Response(json, { headers: { "content-type": "application/json" } });
      },
      {
        metered: "catalog",
        params: t.Object({ slug: t.String({ maxLength: 200 }) }),
        response: { 200: ServiceResponse, 404: ErrorBody, ...errors },
        detail: { summary: "One catalog entry by slug" },
      },
    );
}
