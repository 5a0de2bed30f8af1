import { Elysia, type Static, t } from "elysia";
import { type AuthDeps, authPlugin, noteMeter } from "../guard";
import { ErrorBody, NotFoundBody, RateLimitedBody } from "../http/errors";
import {
  documentedResponses,
  JSON_TYPE,
  jsonResponse,
  preSerialized,
} from "../http/json-responses";
import { decimalQuery } from "../http/params";
import { invalid, serviceNotFound } from "../platform/domain-errors";
import { BATCH_SLUG_CAP } from "../quota/limits";
import { BatchBody, BatchResponse, ListQuery, ServiceListResponse, ServiceResponse } from "./model";
import type { Suggest } from "./search/suggest";
import type { CatalogService } from "./service";

/**
 * The 200 body of GET /v1/catalog/{slug}: the pre-serialized JSON of a ServiceResponse. At run
 * time it is checked as the string it is; its static type (what Eden's treaty client sees) is
 * the entry itself, and the OpenAPI document shows ServiceResponse's schema.
 */
const ServiceJson = preSerialized(ServiceResponse);

const errors = {
  401: ErrorBody,
  422: ErrorBody,
  429: RateLimitedBody,
};

/** GET /v1/catalog, GET /v1/catalog/{slug}, POST /v1/catalog/batch */
export function catalogController(deps: AuthDeps & { catalog: CatalogService; suggest?: Suggest }) {
  const { catalog } = deps;
  const suggest = deps.suggest ?? (() => []);
  return new Elysia({ prefix: "/v1/catalog", tags: ["catalog"] })
    .use(authPlugin(deps))
    .use(decimalQuery)
    .get(
      "/",
      ({ query, set }) => {
        // assembled from pre-serialized entries (see the by-slug route below)
        set.headers["content-type"] = JSON_TYPE;
        const artwork = query.artwork === undefined ? undefined : query.artwork === "true";
        return catalog.listJson(query.limit, query.offset, artwork) as unknown as Static<
          typeof ServiceListResponse
        >;
      },
      {
        apiKey: true,
        query: ListQuery,
        decimalQuery: ListQuery,
        response: { 200: preSerialized(ServiceListResponse), ...errors },
        detail: {
          summary: "List catalog entries",
          description:
            "One page of the catalog in id order (stable across catalog rebuilds). limit 1..200 (default 50), offset >= 0 (default 0); anything else is 422 validation_error. Every entry is listed by default, directory entries without artwork (variants empty, GET /v1/svg answers the placeholder) included, so that every slug GET /v1/catalog/{slug} and GET /v1/brand can return appears in the list; artwork=true keeps the brands with at least one stored SVG, artwork=false the others (total counts the filtered list; any other value is 422 validation_error). Not metered.",
          responses: documentedResponses({ 200: ServiceListResponse, ...errors }),
        },
      },
    )
    .post(
      "/batch",
      ({ body, principal, request, set }) => {
        const unique = [...new Set(body.slugs.map((s) => s.trim().toLowerCase()))];
        const cap = BATCH_SLUG_CAP[principal.tier];
        if (unique.length > cap)
          throw invalid(
            `At most ${cap} unique slugs per batch call on the ${principal.tier} tier (got ${unique.length}).`,
            "batch_too_large",
          );
        // assembled from pre-serialized entries (see the by-slug route below)
        set.headers["content-type"] = JSON_TYPE;
        const missing = unique.filter((slug) => !catalog.brand(slug));
        if (missing.length > 0) noteMeter(request, { miss: missing.map((s) => `slug:${s}`) });
        return catalog.batchJson(unique) as unknown as Static<typeof BatchResponse>;
      },
      {
        metered: "batch",
        body: BatchBody,
        response: { 200: preSerialized(BatchResponse), 413: ErrorBody, ...errors },
        detail: {
          summary: "Resolve up to 10 (free) or 50 (paid, internal) slugs in one call",
          description:
            "Slugs are trimmed and lower-cased; duplicates count once. Unknown slugs map to null and are listed in notFound. Over the tier's cap: 422 batch_too_large. A declared body over 64 KiB: 413 payload_too_large (credentials are checked first). One call counts once against the batch bucket.",
          responses: documentedResponses({ 200: BatchResponse, 413: ErrorBody, ...errors }),
        },
      },
    )
    .get(
      "/:slug",
      ({ params, request, set }) => {
        // Pre-serialized JSON of a view that matches ServiceResponse (every view of the catalog
        // is checked against the schema in tests/catalog/routes.test.ts); answering text rather
        // than a Response lets Elysia build the response once, with the headers already set.
        const json = catalog.viewJson(params.slug);
        if (json === null) {
          noteMeter(request, { miss: [`slug:${params.slug.toLowerCase()}`] });
          throw serviceNotFound(params.slug, suggest(params.slug));
        }
        set.headers["content-type"] = "application/json";
        return json as unknown as Static<typeof ServiceResponse>;
      },
      {
        metered: "catalog",
        params: t.Object({ slug: t.String({ maxLength: 200 }) }),
        // 200 is the pre-serialized ServiceResponse (see above): validated as text here,
        // documented with its JSON schema below
        response: { 200: ServiceJson, 404: NotFoundBody, ...errors },
        detail: {
          summary: "One catalog entry by slug",
          description:
            "The catalog entry (ServiceResponse, svgVariants null, no SVG markup). Slugs are matched case-insensitively. Unknown slug: 404 service_not_found, with up to 3 near-miss slugs in `suggestions` when the search index finds any. Counts against the catalog bucket.",
          responses: {
            200: jsonResponse("The catalog entry", ServiceResponse),
            401: jsonResponse("invalid_api_key: missing or invalid X-API-Key"),
            404: jsonResponse("service_not_found: no catalog entry with this slug", NotFoundBody),
            422: jsonResponse("validation_error: slug longer than 200 characters"),
            429: jsonResponse(
              "rate_limit_exceeded: the catalog bucket's daily limit is reached",
              RateLimitedBody,
            ),
          },
        },
      },
    );
}
