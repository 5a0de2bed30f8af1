import { t } from "elysia";
import { jsonResponse, NotFoundBody, RateLimitedBody } from "../catalog/model";
import { VARIANTS, type Variant } from "../catalog/types";
import { queryEnum, queryInt } from "../http/params";

export type RenderFormat = "png" | "webp";

/** Nice value of render worker threads on Linux (0 = normal, 19 = lowest). */
export const RENDER_NICE = 10;

export const MIN_SIZE = 16;
export const MAX_SIZE = 2048;
export const DEFAULT_SIZE = 256;

export const SlugParams = t.Object({
  slug: t.String({ maxLength: 200, description: "Catalog slug" }),
});

const variant = queryEnum<Variant>("variant", VARIANTS, "mono");

/** issue 25: opt-in lettermark instead of the generic placeholder */
const placeholderKind = t.Optional(
  t.Union([t.Literal("generic"), t.Literal("monogram")], {
    description:
      "What a brand without artwork the caller may get is answered with: generic (default) the spec's placeholder, monogram a lettermark of the brand's initials on its brand colour. Same headers either way (X-Svg-Variant: placeholder, max-age 3600).",
    error: "Invalid query parameter placeholder: must be one of generic, monogram",
  }),
);

export const SvgQuery = t.Object({ variant: t.Optional(variant), placeholder: placeholderKind });

export const RasterQuery = t.Object({
  variant: t.Optional(variant),
  placeholder: placeholderKind,
  size: t.Optional(queryInt("size", MIN_SIZE, MAX_SIZE, DEFAULT_SIZE)),
});

/** The body of a 200 is raw image bytes (not validated as JSON). */
export const ImageBody = t.Unknown({ description: "Raw image bytes" });
export const NotModified = t.Unknown({ description: "Empty body: the client's copy is current" });

const header = (description: string) => ({ description, schema: { type: "string" as const } });

const IMAGE_HEADERS = {
  "X-Svg-Variant": header(
    "Variant actually served: mono, color, dark, light, wordmark, icon, or placeholder",
  ),
  "X-Variant-Restricted": header(
    "Only on free-tier requests for a variant other than mono: the variant that was asked for (mono was served instead)",
  ),
  ETag: header("Strong validator; send it back in If-None-Match to get 304"),
  "Cache-Control": header(
    "public, max-age=86400 for real artwork; public, max-age=3600 for the placeholder",
  ),
  Vary: header("X-API-Key: the served variant depends on the key's tier"),
  "Content-Security-Policy": header(
    "default-src 'none'; style-src 'unsafe-inline'; sandbox (SVG only: opened directly, an SVG can never run script)",
  ),
};

/** OpenAPI `responses` for an image route (Elysia cannot infer media types of raw bytes). */
export function imageResponses(mediaType: string) {
  return {
    200: {
      description: "The artwork (or the generic placeholder)",
      headers: IMAGE_HEADERS,
      content: {
        [mediaType]: {
          schema: mediaType.startsWith("image/svg")
            ? { type: "string" as const }
            : { type: "string" as const, format: "binary" },
        },
      },
    },
    304: { description: "If-None-Match matched the current ETag; no body", headers: IMAGE_HEADERS },
    401: jsonResponse("invalid_api_key: missing or invalid X-API-Key"),
    404: jsonResponse("service_not_found: no catalog entry with this slug", NotFoundBody),
    422: jsonResponse("validation_error: variant or size out of range"),
    429: jsonResponse("rate_limit_exceeded: the bucket's daily limit is reached", RateLimitedBody),
    ...(mediaType.startsWith("image/svg")
      ? {}
      : {
          503: jsonResponse(
            "render_busy: the render queue is full or the render ran past its time limit; Retry-After says when to retry; not charged",
            RenderBusyBody,
          ),
        }),
  };
}

export const RenderBusyBody = t.Object(
  {
    error: t.Literal("render_busy"),
    message: t.String(),
  },
  {
    description:
      "The render queue is full or the render ran past its time limit (Retry-After says when to retry). Not charged.",
  },
);
