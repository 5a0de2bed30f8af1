import { t } from "elysia";
import { MAX_URL_TTL_SECONDS } from "../../packages/client/src/signing";
import { IMAGE_OPTION_DOCS, MAX_DPR, MAX_SIZE, MIN_SIZE, RenderBusyBody } from "../assets/model";
import { VARIANTS } from "../catalog/built-catalog";
import { RateLimitedBody } from "../http/errors";
import { jsonResponse } from "../http/json-responses";

/** Most image URLs signed by one POST /v1/image-urls call. */
export const MAX_IMAGES_PER_CALL = 100;
export const DEFAULT_URL_TTL_SECONDS = 7 * 86_400;

export const FileParams = t.Object({
  file: t.String({
    maxLength: 260,
    description:
      "{slug}.{svg|png|webp} or {domain}.{svg|png|webp}; without an extension the format is auto",
  }),
});

const QUERY_DOCS: [string, string][] = [
  ["variant", `One of ${VARIANTS.join(", ")}; default mono (free keys: mono only)`],
  ["size", `Box in pixels, ${MIN_SIZE} to ${MAX_SIZE}, default 256 (png, webp, auto)`],
  ["dpr", IMAGE_OPTION_DOCS.dpr],
  ["greyscale", IMAGE_OPTION_DOCS.greyscale],
  ["bg", IMAGE_OPTION_DOCS.bg],
  [
    "fallback",
    "A brand without artwork the caller may get: placeholder (default, the generic image), monogram (its initials on its brand colour), 404 (404 service_not_found, to hide the image)",
  ],
  [
    "format",
    "Only without an extension in the file name: auto (default: WebP when Accept names image/webp, else PNG; Vary: Accept), svg, png or webp",
  ],
  ["exp", "Signed URLs: expiry, unix seconds"],
  ["kid", "Signed URLs: id of the API key that signed"],
  ["sig", "Signed URLs: HMAC-SHA256 signature, base64url"],
  ["key", "A publishable key (pk_…), instead of a signature"],
];

/**
 * The query parameters of /i/ URLs as OpenAPI parameter objects. The route reads the raw query
 * itself (the text the signature covers), so it declares no query schema for Elysia to parse.
 */
export const imageQueryParameters = QUERY_DOCS.map(([name, description]) => ({
  name,
  in: "query" as const,
  required: false,
  description,
  schema: { type: "string" as const, maxLength: 200 },
}));

const Format = t.Union([t.Literal("svg"), t.Literal("png"), t.Literal("webp"), t.Literal("auto")], {
  description: "auto: WebP when the browser accepts it, else PNG",
});

export const ImageSpec = t.Object(
  {
    slug: t.Optional(t.String({ maxLength: 200, description: "Catalog slug" })),
    domain: t.Optional(t.String({ maxLength: 253, description: "A domain the brand owns" })),
    format: Format,
    variant: t.Optional(t.Union(VARIANTS.map((v) => t.Literal(v)))),
    size: t.Optional(t.Integer({ minimum: MIN_SIZE, maximum: MAX_SIZE })),
    dpr: t.Optional(t.Integer({ minimum: 1, maximum: MAX_DPR })),
    greyscale: t.Optional(t.Boolean()),
    bg: t.Optional(t.String({ pattern: "^#?[0-9a-fA-F]{6}$", description: "#rrggbb" })),
    fallback: t.Optional(
      t.Union([t.Literal("placeholder"), t.Literal("monogram"), t.Literal("404")]),
    ),
  },
  { description: "One image: slug or domain (exactly one), its format and options" },
);

export const ImageUrlsBody = t.Object({
  images: t.Array(ImageSpec, { minItems: 1, maxItems: MAX_IMAGES_PER_CALL }),
  expiresIn: t.Optional(
    t.Integer({
      minimum: 60,
      maximum: MAX_URL_TTL_SECONDS,
      description: `Seconds the URLs stay valid, 60 to ${MAX_URL_TTL_SECONDS} (30 days); default ${DEFAULT_URL_TTL_SECONDS}`,
    }),
  ),
});

export const ImageUrlsResponse = t.Object({
  urls: t.Array(
    t.Object({
      url: t.String({ description: "Absolute URL (PUBLIC_URL + path)" }),
      path: t.String({ description: "/i/{slug}.{ext}?…&exp=…&kid=…&sig=…" }),
    }),
    { description: "In the order of `images`" },
  ),
  expiresAt: t.String({ description: "ISO time the URLs stop working" }),
  kid: t.String({ description: "The key id the URLs are charged to" }),
});

export const SigningSecretResponse = t.Object({
  kid: t.String({ description: "Key id: the kid parameter of URLs signed with this secret" }),
  secret: t.String({
    description:
      "HMAC-SHA256 signing secret (base64url). Valid as long as the API key; keep it as secret as the key",
  }),
  algorithm: t.Literal("HMAC-SHA256"),
});

/** OpenAPI responses of GET /i/{file} (raw image bytes in three media types). */
export const imageFileResponses = {
  200: {
    description: "The image",
    content: {
      "image/svg+xml": { schema: { type: "string" as const } },
      "image/png": { schema: { type: "string" as const, format: "binary" } },
      "image/webp": { schema: { type: "string" as const, format: "binary" } },
    },
  },
  304: { description: "If-None-Match matched the current ETag; no body" },
  401: jsonResponse(
    "invalid_api_key: neither a signature nor a publishable key, or an unknown key",
  ),
  403: jsonResponse(
    "invalid_signature, url_expired, url_revoked (signed URLs) or origin_not_allowed (publishable keys)",
  ),
  404: jsonResponse(
    "service_not_found or domain_not_found; also fallback=404 for a brand without artwork",
  ),
  422: jsonResponse("validation_error: an option out of range"),
  429: jsonResponse(
    "rate_limit_exceeded: the key's daily limit for the format's bucket",
    RateLimitedBody,
  ),
  503: jsonResponse("render_busy: retry after Retry-After; not charged", RenderBusyBody),
};
