import { Elysia } from "elysia";
import { ErrorBody, NotFoundBody, RateLimitedBody } from "../catalog/model";
import type { Suggest } from "../catalog/search/suggest";
import type { Variant } from "../catalog/types";
import { type AuthDeps, authPlugin } from "../http/auth";
import { ApiError, serviceNotFound } from "../http/errors";
import { decimalQuery } from "../http/params";
import type { Tier } from "../quota/limits";
import {
  DEFAULT_SIZE,
  ImageBody,
  imageResponses,
  NotModified,
  RasterQuery,
  RenderBusyBody,
  type RenderFormat,
  SlugParams,
  SvgQuery,
} from "./model";
import { RenderBusy } from "./render-pool";
import {
  type AssetService,
  CACHE_ARTWORK,
  CACHE_PLACEHOLDER,
  etagMatches,
  rasterEtag,
  type ServedSvg,
  svgEtag,
} from "./service";

/** Forbids script, plugins and external loads when an SVG is opened directly in a browser. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

const responses = {
  200: ImageBody,
  304: NotModified,
  401: ErrorBody,
  404: NotFoundBody,
  422: ErrorBody,
  429: RateLimitedBody,
};

const rasterResponses = { ...responses, 503: RenderBusyBody };

/** 503 render_busy with Retry-After: a 5xx, so the request's quota unit is given back. */
export function renderBusy(err: RenderBusy): ApiError {
  return new ApiError(
    503,
    "render_busy",
    err.reason === "queue"
      ? "The renderer is busy; retry after the number of seconds in Retry-After. This request was not charged."
      : "Rendering took too long and was stopped; retry after the number of seconds in Retry-After. This request was not charged.",
    {},
    { "retry-after": String(err.retryAfterSeconds) },
  );
}

const RESOLUTION =
  "Variant resolution: the requested variant when the brand has it, else its mono mark; when mono is missing too, " +
  "pro, enterprise and internal keys get the first stored of color, icon, wordmark, light, dark; a brand with nothing to serve gets a " +
  "generic placeholder (200, X-Svg-Variant: placeholder, Cache-Control: public, max-age=3600). Unknown slug: 404 service_not_found (with near-miss slugs in `suggestions` when the search index finds any). " +
  "Free keys are served mono only: asking for another variant serves mono (or the placeholder) and adds X-Variant-Restricted " +
  "naming the variant asked for; pro, enterprise and internal keys get all six. dark and light exist once the brand has been " +
  "enriched (GET /v1/brand starts that). X-Svg-Variant names the variant served. Real artwork: Cache-Control: public, " +
  "max-age=86400. Strong ETag; If-None-Match with a current ETag answers 304 with no body, and a 304 counts against the " +
  "bucket like a 200 (the key made a request). Vary: X-API-Key, since the tier decides the variant.";

type Headers = Record<string, string | number>;

function commonHeaders(set: { headers: Headers }, served: ServedSvg, etag: string) {
  set.headers["x-svg-variant"] = served.variant;
  if (served.restricted) set.headers["x-variant-restricted"] = served.restricted;
  set.headers["cache-control"] =
    served.variant === "placeholder" ? CACHE_PLACEHOLDER : CACHE_ARTWORK;
  set.headers.etag = etag;
  set.headers.vary = "X-API-Key";
  set.headers["x-content-type-options"] = "nosniff";
  set.headers["content-security-policy"] = SVG_CSP;
}

/** GET /v1/svg/{slug}, GET /v1/png/{slug}, GET /v1/webp/{slug} */
export function assetsController(deps: AuthDeps & { assets: AssetService; suggest?: Suggest }) {
  const { assets } = deps;
  const notFound = (slug: string) => serviceNotFound(slug, deps.suggest?.(slug) ?? []);

  /** PNG/WebP: 304 before rendering when the client's ETag is current; cache hits stay sync. */
  function raster(
    format: RenderFormat,
    slug: string,
    query: { variant?: Variant; size?: number; placeholder?: "generic" | "monogram" },
    tier: Tier,
    ifNoneMatch: string | null,
    set: { headers: Headers; status?: number | string },
  ): Uint8Array | null | Promise<Uint8Array> {
    // the schema fills both defaults; the fallbacks only satisfy the optional types
    const variant = query.variant ?? "mono";
    const size = query.size ?? DEFAULT_SIZE;
    const resolved = assets.resolve(slug, variant, tier, query.placeholder === "monogram");
    if (!resolved) throw notFound(slug);
    const served = assets.rasterSource(resolved, size, format);
    const etag = rasterEtag(served, size, format);
    if (etagMatches(ifNoneMatch, etag)) {
      commonHeaders(set, served, etag);
      set.status = 304;
      return null;
    }
    const cached = assets.cachedRaster(served, size, format);
    if (cached) {
      commonHeaders(set, served, etag);
      set.headers["content-type"] = `image/${format}`;
      return cached;
    }
    // headers only once the image exists: a failed render must not leave cache headers on a 500
    return assets.raster(served, size, format).then(
      (out) => {
        commonHeaders(set, out.source, out.etag);
        set.headers["content-type"] = `image/${format}`;
        return out.bytes;
      },
      (err) => {
        throw err instanceof RenderBusy ? renderBusy(err) : err;
      },
    );
  }

  return new Elysia({ prefix: "/v1", tags: ["assets"] })
    .use(authPlugin(deps))
    .use(decimalQuery)
    .get(
      "/svg/:slug",
      ({ params, query, principal, request, set }) => {
        const served = assets.resolve(
          params.slug,
          query.variant ?? "mono",
          principal.tier,
          query.placeholder === "monogram",
        );
        if (!served) throw notFound(params.slug);
        const etag = svgEtag(served);
        commonHeaders(set, served, etag);
        if (etagMatches(request.headers.get("if-none-match"), etag)) {
          set.status = 304;
          return null;
        }
        set.headers["content-type"] = "image/svg+xml";
        return served.bytes;
      },
      {
        metered: "svg",
        params: SlugParams,
        query: SvgQuery,
        response: responses,
        detail: {
          summary: "Logo artwork as raw SVG",
          description: `Raw SVG bytes (image/svg+xml) of the brand's artwork. ${RESOLUTION} Every SVG carries X-Content-Type-Options: nosniff and Content-Security-Policy: ${SVG_CSP}. Counts against the svg bucket.`,
          responses: imageResponses("image/svg+xml"),
        },
      },
    )
    .get(
      "/png/:slug",
      ({ params, query, principal, request, set }) =>
        raster(
          "png",
          params.slug,
          query,
          principal.tier,
          request.headers.get("if-none-match"),
          set,
        ),
      {
        metered: "png",
        params: SlugParams,
        query: RasterQuery,
        decimalQuery: RasterQuery,
        response: rasterResponses,
        detail: {
          summary: "Logo artwork rendered as PNG",
          description: `The same artwork as GET /v1/svg/{slug}, rendered with resvg. size (16..2048, default 256) is the box in pixels: the image is exactly size x size, the mark keeps its aspect ratio, its longer side fills the box and it is centered on a transparent background. Out-of-range size or unknown variant: 422 validation_error. ${RESOLUTION} X-Svg-Variant names the source variant. The ETag is derived from the source SVG's hash, the size and the format. Counts against the png bucket.`,
          responses: imageResponses("image/png"),
        },
      },
    )
    .get(
      "/webp/:slug",
      ({ params, query, principal, request, set }) =>
        raster(
          "webp",
          params.slug,
          query,
          principal.tier,
          request.headers.get("if-none-match"),
          set,
        ),
      {
        metered: "webp",
        params: SlugParams,
        query: RasterQuery,
        decimalQuery: RasterQuery,
        response: rasterResponses,
        detail: {
          summary: "Logo artwork rendered as WebP",
          description: `Identical to GET /v1/png/{slug} (same size box, variants, headers and rules), encoded as lossless WebP with transparency. Counts against the webp bucket.`,
          responses: imageResponses("image/webp"),
        },
      },
    );
}
