import { Elysia } from "elysia";
import type { Suggest } from "../catalog/search/suggest";
import { type AuthDeps, authPlugin, noteMeter } from "../guard";
import { ErrorBody, NotFoundBody, RateLimitedBody } from "../http/errors";
import { decimalQuery } from "../http/params";
import { type DomainError, invalid, serviceNotFound, unavailable } from "../platform/domain-errors";
import type { Tier } from "../quota/limits";
import {
  DEFAULT_SIZE,
  ImageBody,
  imageResponses,
  MAX_SIZE,
  NotModified,
  PIXELS_ERROR,
  RasterQuery,
  type RasterQueryValue,
  RenderBusyBody,
  SlugParams,
  SvgQuery,
} from "./model";
import { DEFAULT_LAYOUT, type Layout, type RenderFormat } from "./render";
import { RenderBusy } from "./render-pool";
import {
  type AssetService,
  CACHE_ARTWORK,
  CACHE_PLACEHOLDER,
  etagMatches,
  type ImageOptions,
  rasterEtag,
  type ServedSvg,
  svgEtag,
} from "./service";

export const pixelsTooLarge = () => invalid(PIXELS_ERROR);

/** The image options of a raster route's query. */
function rasterOptions(q: RasterQueryValue): ImageOptions {
  return {
    variant: q.variant ?? "mono",
    fallback: q.placeholder === "monogram" ? "monogram" : "placeholder",
    greyscale: q.greyscale === "true" || q.greyscale === "1",
    bg: q.bg ? q.bg.replace("#", "").toLowerCase() : null,
  };
}

/** Forbids script, plugins and external loads when an SVG is opened directly in a browser. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
/** The same for a discovered raster mark, which draws its own PNG from a data: URI. */
export const SVG_CSP_RASTER =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox";

const responses = {
  200: ImageBody,
  304: NotModified,
  401: ErrorBody,
  404: NotFoundBody,
  422: ErrorBody,
  429: RateLimitedBody,
};

const rasterResponses = { ...responses, 503: RenderBusyBody };

/** render_busy (503) with Retry-After: a 5xx, so the request's quota unit is given back. */
export function renderBusy(err: RenderBusy): DomainError {
  return unavailable(
    "render_busy",
    err.reason === "queue"
      ? "The renderer is busy; retry after the number of seconds in Retry-After. This request was not charged."
      : "Rendering took too long and was stopped; retry after the number of seconds in Retry-After. This request was not charged.",
    err.retryAfterSeconds,
  );
}

const RESOLUTION =
  "Variant resolution: the requested variant when the brand has it, else its mono mark; when mono is missing too, " +
  "pro, enterprise and internal keys get the first stored of color, icon, wordmark, light, dark; a brand with nothing to serve gets a " +
  "generic placeholder (200, X-Svg-Variant: placeholder, Cache-Control: public, max-age=3600). Unknown slug: 404 service_not_found (with near-miss slugs in `suggestions` when the search index finds any). " +
  "Free keys are served mono only: asking for another variant serves mono (or the placeholder) and adds X-Variant-Restricted " +
  "naming the variant asked for; pro, enterprise and internal keys get all six. Which artwork each variant is (color the full-colour " +
  "symbol, dark/light the mark for that background, wordmark the logotype) follows the variant rules of docs/assets.md. X-Svg-Variant names the variant served, X-Asset-Provenance where it came from (catalog, bimi-verified, bimi, website, website-http, pin). Real artwork: Cache-Control: public, " +
  "max-age=86400. Strong ETag; If-None-Match with a current ETag answers 304 with no body, and a 304 counts against the " +
  "bucket like a 200 (the key made a request). Vary: X-API-Key, since the tier decides the variant.";

type Headers = Record<string, string | number>;

/** An unknown slug (404) or a brand with nothing to serve (placeholder) is a miss of its slug. */
function noteAssetMiss(request: Request, slug: string, served: ServedSvg | null) {
  if (!served || served.variant === "placeholder")
    noteMeter(request, { miss: [`slug:${slug.toLowerCase()}`] });
}

function commonHeaders(set: ResponseSet, served: ServedSvg, etag: string) {
  set.headers["x-svg-variant"] = served.variant;
  if (served.provenance) set.headers["x-asset-provenance"] = served.provenance;
  if (served.restricted) set.headers["x-variant-restricted"] = served.restricted;
  set.headers["cache-control"] =
    served.variant === "placeholder" ? CACHE_PLACEHOLDER : CACHE_ARTWORK;
  set.headers.etag = etag;
  set.headers.vary = "X-API-Key";
  set.headers["x-content-type-options"] = "nosniff";
  set.headers["content-security-policy"] = served.rasterSide ? SVG_CSP_RASTER : SVG_CSP;
}

export type ResponseSet = { headers: Headers; status?: number | string };

/** An SVG answer: the artwork headers, and 304 when the client's ETag is current. */
export function answerSvg(
  served: ServedSvg,
  ifNoneMatch: string | null,
  set: ResponseSet,
): Uint8Array | null {
  const etag = svgEtag(served);
  commonHeaders(set, served, etag);
  if (etagMatches(ifNoneMatch, etag)) {
    set.status = 304;
    return null;
  }
  set.headers["content-type"] = "image/svg+xml";
  return served.bytes;
}

/**
 * A PNG/WebP answer of `served` at `size` pixels: 304 before rendering when the client's ETag
 * is current; cache hits stay synchronous.
 */
export function answerRaster(
  assets: AssetService,
  format: RenderFormat,
  resolved: ServedSvg,
  size: number,
  ifNoneMatch: string | null,
  set: ResponseSet,
  layout: Layout = DEFAULT_LAYOUT,
): Uint8Array | null | Promise<Uint8Array> {
  const served = assets.rasterSource(resolved, size, format, layout);
  const etag = rasterEtag(served, size, format, layout);
  if (etagMatches(ifNoneMatch, etag)) {
    commonHeaders(set, served, etag);
    set.status = 304;
    return null;
  }
  const cached = assets.cachedRaster(served, size, format, layout);
  if (cached) {
    commonHeaders(set, served, etag);
    set.headers["content-type"] = `image/${format}`;
    return cached;
  }
  // headers only once the image exists: a failed render must not leave cache headers on a 500
  return assets.raster(served, size, format, layout).then(
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

/** GET /v1/svg/{slug}, GET /v1/png/{slug}, GET /v1/webp/{slug} */
export function assetsController(deps: AuthDeps & { assets: AssetService; suggest?: Suggest }) {
  const { assets } = deps;
  const notFound = (slug: string) => serviceNotFound(slug, deps.suggest?.(slug) ?? []);

  /** PNG/WebP with the image options of the raster query. */
  function raster(
    format: RenderFormat,
    slug: string,
    query: RasterQueryValue,
    tier: Tier,
    request: Request,
    set: ResponseSet,
  ) {
    // the schema fills the defaults; the fallbacks only satisfy the optional types
    const size = (query.size ?? DEFAULT_SIZE) * (query.dpr ?? 1);
    if (size > MAX_SIZE) throw pixelsTooLarge();
    const layout = {
      fit: query.fit ?? DEFAULT_LAYOUT.fit,
      padding: query.padding ?? DEFAULT_LAYOUT.padding,
    };
    const ifNoneMatch = request.headers.get("if-none-match");
    const answer = (s: ServedSvg | null | "hidden") => {
      noteAssetMiss(request, slug, s === "hidden" ? null : s);
      if (!s || s === "hidden") throw notFound(slug);
      return answerRaster(assets, format, s, size, ifNoneMatch, set, layout);
    };
    const selected = assets.select(slug, rasterOptions(query), tier);
    return selected instanceof Promise ? selected.then(answer) : answer(selected);
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
        noteAssetMiss(request, params.slug, served);
        if (!served) throw notFound(params.slug);
        return answerSvg(served, request.headers.get("if-none-match"), set);
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
        raster("png", params.slug, query, principal.tier, request, set),
      {
        metered: "png",
        params: SlugParams,
        query: RasterQuery,
        decimalQuery: RasterQuery,
        response: rasterResponses,
        detail: {
          summary: "Logo artwork rendered as PNG",
          description: `The same artwork as GET /v1/svg/{slug}, rendered with resvg. size (16..2048, default 256) is the box in pixels: the image is exactly size x size, transparent, the mark centered and keeping its aspect ratio. padding (0..40, default 8) is the safe area: that percentage of the size is left empty on every side. fit=optical (default) scales marks by area so a wide wordmark and a square symbol carry the same visual weight in a logo wall (a square mark's side is 75% of the safe area; a wide mark is capped by the safe area's width); fit=contain makes the longer side fill the safe area (fit=contain&padding=0: edge to edge). Placement uses the painted bounds of the artwork, not its viewBox. Out-of-range size or padding, unknown variant or fit: 422 validation_error. ${RESOLUTION} X-Svg-Variant names the source variant. The ETag is derived from the source SVG's hash, the size and the format. Counts against the png bucket.`,
          responses: imageResponses("image/png"),
        },
      },
    )
    .get(
      "/webp/:slug",
      ({ params, query, principal, request, set }) =>
        raster("webp", params.slug, query, principal.tier, request, set),
      {
        metered: "webp",
        params: SlugParams,
        query: RasterQuery,
        decimalQuery: RasterQuery,
        response: rasterResponses,
        detail: {
          summary: "Logo artwork rendered as WebP",
          description: `Identical to GET /v1/png/{slug} (same size box, padding, fit, variants, headers and rules), encoded as lossless WebP with transparency. Counts against the webp bucket.`,
          responses: imageResponses("image/webp"),
        },
      },
    );
}
