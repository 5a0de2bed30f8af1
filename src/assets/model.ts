import { t } from "elysia";
import { VARIANTS, type Variant } from "../catalog/built-catalog";
import { NotFoundBody, RateLimitedBody } from "../http/errors";
import { jsonResponse } from "../http/json-responses";
import { queryEnum, queryInt } from "../http/params";
import { DEFAULT_LAYOUT, FITS, MAX_PADDING } from "./render";

export const MIN_SIZE = 16;
export const MAX_SIZE = 2048;
export const DEFAULT_SIZE = 256;

export const SlugParams = t.Object({
  slug: t.String({ maxLength: 200, description: "Catalog slug" }),
});

const variant = queryEnum<Variant>("variant", VARIANTS, "mono");

/** opt-in lettermark instead of the generic placeholder */
const placeholderKind = t.Optional(
  t.Union([t.Literal("generic"), t.Literal("monogram")], {
    description:
      "What a brand without artwork the caller may get is answered with: generic (default) the spec's placeholder, monogram a lettermark of the brand's initials on its brand colour. Same headers either way (X-Svg-Variant: placeholder, max-age 3600).",
    error: "Invalid query parameter placeholder: must be one of generic, monogram",
  }),
);

export const SvgQuery = t.Object({ variant: t.Optional(variant), placeholder: placeholderKind });

export const MAX_DPR = 3;
export const TRUE_FALSE = ["true", "false", "1", "0"] as const;
export const BG_PATTERN = "^#?[0-9a-fA-F]{6}$";
export const BG_ERROR =
  "Invalid query parameter bg: must be a colour written #rrggbb (%23rrggbb in a URL) or rrggbb";
export const PIXELS_ERROR = `size x dpr must be at most ${MAX_SIZE} pixels`;

/** The image options shared by the raster routes and /i/ URLs. */
export const IMAGE_OPTION_DOCS = {
  dpr: `Device pixel ratio, 1 to ${MAX_DPR}: the image is size x dpr pixels (retina), at most ${MAX_SIZE}`,
  greyscale: "true or 1: the artwork in shades of grey",
  bg: "The page background the image sits on (#rrggbb). The served variant is the first whose rendered pixels reach 3:1 contrast on it (the one asked for, then the variant drawn for a page of that lightness, then the others the tier may get); when none does, the mark's silhouette in black or white, whichever contrasts more (placeholders too)",
};

export const RasterQuery = t.Object({
  variant: t.Optional(variant),
  placeholder: placeholderKind,
  size: t.Optional(queryInt("size", MIN_SIZE, MAX_SIZE, DEFAULT_SIZE)),
  dpr: t.Optional({ ...queryInt("dpr", 1, MAX_DPR, 1), description: IMAGE_OPTION_DOCS.dpr }),
  greyscale: t.Optional({
    ...queryEnum("greyscale", TRUE_FALSE, "false"),
    description: IMAGE_OPTION_DOCS.greyscale,
  }),
  bg: t.Optional(
    t.String({ pattern: BG_PATTERN, description: IMAGE_OPTION_DOCS.bg, error: BG_ERROR }),
  ),
  fit: t.Optional(
    t.Union(
      FITS.map((f) => t.Literal(f)),
      {
        default: DEFAULT_LAYOUT.fit,
        description:
          "How the mark fills the safe area: optical (default) scales by area, so a wide wordmark and a square symbol look equally heavy in a logo wall (a square mark's side is 75% of the safe area; no mark leaves it); contain makes the mark's longer side fill the safe area",
        error: `Invalid query parameter fit: must be one of ${FITS.join(", ")}`,
      },
    ),
  ),
  padding: t.Optional(queryInt("padding", 0, MAX_PADDING, DEFAULT_LAYOUT.padding)),
});
export type RasterQueryValue = typeof RasterQuery.static;

/** The body of a 200 is raw image bytes (not validated as JSON). */
export const ImageBody = t.Unknown({ description: "Raw image bytes" });
export const NotModified = t.Unknown({ description: "Empty body: the client's copy is current" });

const header = (description: string) => ({ description, schema: { type: "string" as const } });

const IMAGE_HEADERS = {
  "X-Svg-Variant": header(
    "Variant actually served: mono, color, dark, light, wordmark, icon, or placeholder",
  ),
  "X-Asset-Provenance": header(
    "Where the served artwork came from: catalog, bimi-verified, bimi, website, website-http or pin (the provenance field of GET /v1/brand and the catalog routes; a dark or light variant derived from the mono mark has the mono mark's). Absent for the placeholder",
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
    422: jsonResponse("validation_error: variant, size, fit or padding out of range"),
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
