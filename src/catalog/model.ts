import { type Static, type TSchema, t } from "elysia";
import { queryEnum, queryInt } from "../http/params";

const Hex = t.String({ pattern: "^[0-9a-f]{6}$", description: "6 hex characters, no leading #" });
const NullableHex = t.Union([Hex, t.Null()]);

/** A variant name, as brand responses and discovery records list them. */
export const VariantName = t.Union([
  t.Literal("mono"),
  t.Literal("color"),
  t.Literal("dark"),
  t.Literal("light"),
  t.Literal("wordmark"),
  t.Literal("icon"),
]);

export const ColorRole = t.Object({
  role: t.String({ description: "brand | dark-mode | contrast-text | ..." }),
  hex: Hex,
  source: t.String({ description: "simple-icons | artwork | derived | override" }),
});

export const SvgVariantInfo = t.Object({
  variant: t.String(),
  verified: t.Boolean(),
});

export const CssVars = t.Union([
  t.Object({
    "--brand-color": t.String({ pattern: "^#[0-9a-f]{6}$" }),
    "--brand-color-dark": t.String({ pattern: "^#[0-9a-f]{6}$" }),
    "--brand-color-contrast": t.String({ pattern: "^#[0-9a-f]{6}$" }),
  }),
  t.Null(),
]);

/** Where one source's artwork comes from (Brand.artwork in src/catalog/types.ts). */
export const ArtworkSource = t.Object({
  source: t.String({
    description: "The source label of the variants: simple-icons, iconify:logos, thesvg ...",
  }),
  package: t.String({ description: "npm package the artwork was taken from" }),
  licence: t.String({ description: "SPDX identifier of the licence the artwork is used under" }),
  url: t.String({
    description: "The upstream project, or the exact upstream file where the licence is per file",
  }),
  variants: t.Array(VariantName, { description: "The variants drawn from this source" }),
});

/** Directory fields (name-suggestion-index / Wikidata) and artwork provenance, present only where known. */
export const DirectoryFields = {
  description: t.Optional(
    t.String({ description: "One-line description of the company (Wikidata's), where known" }),
  ),
  wikidata: t.Optional(
    t.String({ pattern: "^Q[0-9]+$", description: "Wikidata item id, where known" }),
  ),
  links: t.Optional(
    t.Record(t.String(), t.String(), {
      description:
        "Official website and social profiles as URLs, where known; keys among website, facebook, instagram, x, youtube, linkedin, tiktok",
    }),
  ),
  artwork: t.Optional(
    t.Array(ArtworkSource, {
      description:
        "Provenance of the stored artwork, one entry per source: package, licence and upstream URL (brands with artwork)",
    }),
  ),
};

export type ArtworkSourceView = Static<typeof ArtworkSource>;

/** The directory fields of a brand that has them (none of the keys when unknown). */
export function directoryFields(b: {
  description?: string;
  wikidata?: string;
  links?: Record<string, string>;
  artwork?: ArtworkSourceView[];
}) {
  return {
    ...(b.description ? { description: b.description } : {}),
    ...(b.wikidata ? { wikidata: b.wikidata } : {}),
    ...(b.links ? { links: b.links } : {}),
    ...(b.artwork?.length ? { artwork: b.artwork } : {}),
  };
}

export const ServiceResponse = t.Object({
  id: t.Integer({ description: "Stable identifier" }),
  slug: t.String({ description: "URL-safe identifier" }),
  name: t.String(),
  brandColor: NullableHex,
  darkModeColor: NullableHex,
  svgVariants: t.Union([t.Array(SvgVariantInfo), t.Null()], {
    description: "Catalog routes always return null; see GET /v1/brand for variants",
  }),
  colors: t.Union([t.Array(ColorRole), t.Null()]),
  _css: CssVars,
  _notice: t.String(),
  ...DirectoryFields,
});

export const ServiceListResponse = t.Object(
  {
    items: t.Array(ServiceResponse),
    total: t.Integer(),
    limit: t.Integer(),
    offset: t.Integer(),
  },
  { description: "One page of the catalog, in id order" },
);

export const BatchBody = t.Object({
  slugs: t.Array(t.String({ maxLength: 200 }), {
    description:
      "Catalog slugs; duplicates count once. At most 10 unique (free) or 50 (paid, internal).",
  }),
});

export const BatchResponse = t.Object(
  {
    results: t.Record(t.String(), t.Union([ServiceResponse, t.Null()])),
    found: t.Integer(),
    notFound: t.Array(t.String()),
  },
  { description: "Each unique slug mapped to its catalog entry, or null when unknown" },
);

export const ListQuery = t.Object({
  limit: queryInt("limit", 1, 200, 50),
  // no default: every entry is listed (see docs/catalog-build.md, "Brand directory")
  artwork: t.Optional(queryEnum("artwork", ["true", "false"])),
  // bounded so the echo is always the exact integer asked for (any offset past the end is empty)
  offset: queryInt("offset", 0, 1_000_000_000, 0),
});

export const ErrorBody = t.Object(
  {
    error: t.String({ description: "machine-readable code" }),
    message: t.String(),
  },
  { additionalProperties: true },
);

/** 404 service_not_found: the error shape plus optional "did you mean" slugs. */
export const NotFoundBody = t.Object(
  {
    error: t.Literal("service_not_found"),
    message: t.String(),
    suggestions: t.Optional(
      t.Array(t.String(), {
        maxItems: 3,
        description:
          "Near-miss slugs from the search index, best first (absent when none); an extra field, the body keeps { error, message }",
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      "service_not_found: no catalog entry with this slug; suggestions, when any, are slugs it may have meant",
  },
);

export const RateLimitedBody = t.Object(
  {
    error: t.Literal("rate_limit_exceeded"),
    message: t.String(),
    reset_in_seconds: t.Integer(),
    upgrade_url: t.String(),
  },
  { description: "rate_limit_exceeded: the limit is reached until reset_in_seconds have passed" },
);

/** The content type Elysia gives JSON it serializes; pre-serialized bodies send the same. */
export const JSON_TYPE = "application/json;charset=utf-8";

/**
 * The `response` schema of a route answering pre-serialized JSON text: validated as a string,
 * typed as the JSON it holds (so Eden's treaty client sees the real type).
 */
export const preSerialized = <S extends TSchema>(_schema: S) => t.Unsafe<Static<S>>(t.String());

/** An OpenAPI response entry with a JSON body (for routes that document `responses` by hand). */
export function jsonResponse(description: string, schema: TSchema = ErrorBody) {
  return { description, content: { "application/json": { schema } } };
}

/**
 * detail.responses for a route answering pre-serialized JSON (its `response` is t.String() for
 * 200): the OpenAPI responses Elysia generates from these schemas (the schema's description
 * becomes the response's; its top-level additionalProperties is left out), so the document
 * stays the same.
 */
export function documentedResponses(schemas: Record<number, TSchema>) {
  const out: Record<string, ReturnType<typeof jsonResponse>> = {};
  for (const [status, s] of Object.entries(schemas)) {
    const { description, additionalProperties: _, ...schema } = s;
    const content = { "application/json": { schema: schema as TSchema } };
    // without one, normalizeOpenApi (src/http/openapi.ts) describes the status, as it does now
    out[status] = (description ? { description, content } : { content }) as (typeof out)[string];
  }
  return out;
}
