import { Elysia } from "elysia";
import { renderBusy } from "../assets";
import { ImageBody, RenderBusyBody, SlugParams } from "../assets/model";
import { RenderBusy } from "../assets/render-pool";
import { type AddressSource, clientIp } from "../http/client-ip";
import { ErrorBody, NotFoundBody, RateLimitedBody, windowLimited } from "../http/errors";
import { jsonResponse } from "../http/json-responses";
import { decimalQuery } from "../http/params";
import { serviceNotFound } from "../platform/domain-errors";
import type { RatePolicy } from "../quota/limits";
import type { RateLimiter } from "../quota/rate-limit";
import {
  GALLERY_SEARCH_LIMIT,
  GALLERY_THUMBNAIL_LIMIT,
  GallerySearchQuery,
  GallerySearchResponse,
  ThumbnailQuery,
} from "./model";
import type { GalleryService } from "./service";

export interface GalleryDeps {
  gallery: GalleryService;
  limiter: RateLimiter;
  trustProxy: boolean;
  upgradeUrl: string;
}

const PUBLIC =
  "Public: no API key, counts against no account's quota. Capped per client IP (X-Forwarded-For when TRUST_PROXY is set): ";

/**
 * GET /v1/gallery/search and GET /v1/gallery/{slug}/thumbnail: the public gallery behind the
 * console's landing page and its result thumbnails.
 */
export function galleryController(deps: GalleryDeps) {
  async function admit(policy: RatePolicy, request: Request, server: unknown) {
    const ip = clientIp(request, server as AddressSource | null, deps.trustProxy);
    const d = await deps.limiter.hit(policy, `ip:${ip}`);
    if (!d.allowed) throw windowLimited(policy, d.retryAfter, deps.upgradeUrl);
  }

  return new Elysia({ prefix: "/v1/gallery", tags: ["gallery"] })
    .use(decimalQuery)
    .get(
      "/search",
      async ({ query, request, server }) => {
        await admit(GALLERY_SEARCH_LIMIT, request, server);
        return { matches: deps.gallery.find(query.q, query.limit ?? 8) };
      },
      {
        query: GallerySearchQuery,
        response: { 200: GallerySearchResponse, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Search the catalog without a key",
          description: `Slug, name and brand colour of the best matches (at most 12). ${PUBLIC}${GALLERY_SEARCH_LIMIT.limit} searches per minute (429 rate_limit_exceeded with Retry-After).`,
          security: [],
        },
      },
    )
    .get(
      "/:slug/thumbnail",
      async ({ params, query, request, server, set }) => {
        await admit(GALLERY_THUMBNAIL_LIMIT, request, server);
        let thumb: Awaited<ReturnType<GalleryService["thumbnail"]>>;
        try {
          thumb = await deps.gallery.thumbnail(
            params.slug,
            query.variant ?? "mono",
            query.size ?? 64,
          );
        } catch (err) {
          throw err instanceof RenderBusy ? renderBusy(err) : err;
        }
        if (!thumb) throw serviceNotFound(params.slug);
        set.headers["content-type"] = "image/png";
        set.headers["cache-control"] = "public, max-age=86400";
        set.headers["x-svg-variant"] = thumb.served;
        return thumb.png;
      },
      {
        params: SlugParams,
        query: ThumbnailQuery,
        response: {
          200: ImageBody,
          404: NotFoundBody,
          422: ErrorBody,
          429: RateLimitedBody,
          503: RenderBusyBody,
        },
        detail: {
          summary: "A small PNG thumbnail of a brand's mark without a key",
          description: `The mono (default) or color mark as a PNG of 16 to 128 px (default 64); a brand without that variant gets its mono mark, one without artwork its lettermark; X-Svg-Variant names what was drawn. Cache-Control: public, max-age=86400. ${PUBLIC}${GALLERY_THUMBNAIL_LIMIT.limit} thumbnails per minute (429 rate_limit_exceeded with Retry-After). Unknown slug: 404 service_not_found.`,
          security: [],
          responses: {
            200: {
              description: "The thumbnail",
              content: { "image/png": { schema: { type: "string", format: "binary" } } },
            },
            404: jsonResponse("service_not_found: no catalog entry with this slug", NotFoundBody),
            422: jsonResponse("validation_error: variant or size out of range"),
            429: jsonResponse("rate_limit_exceeded: the per-IP limit is reached", RateLimitedBody),
            503: jsonResponse(
              "render_busy: the renderer is busy; retry after Retry-After",
              RenderBusyBody,
            ),
          },
        },
      },
    );
}
