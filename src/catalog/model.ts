import { type Static, t } from "elysia";
import { queryEnum, queryInt } from "../http/params";
import type { VARIANTS } from "./built-catalog";

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

/** Where one served variant came from (catalog/provenance.ts). */
export const ProvenanceName = t.Union(
  // PROVENANCES of catalog/provenance.ts, in its order (a test keeps the two the same)
  [
    t.Literal("catalog"),
    t.Literal("bimi-verified"),
    t.Literal("bimi"),
    t.Literal("website"),
    t.Literal("website-http"),
    t.Literal("pin"),
  ],
  { description: "Where the variant came from (see provenance)" },
);

/** Every stored variant's provenance, by variant name. */
export const VariantProvenance = t.Object(
  {
    mono: t.Optional(ProvenanceName),
    color: t.Optional(ProvenanceName),
    dark: t.Optional(ProvenanceName),
    light: t.Optional(ProvenanceName),
    wordmark: t.Optional(ProvenanceName),
    icon: t.Optional(ProvenanceName),
  } satisfies Record<(typeof VARIANTS)[number], unknown>,
  {
    description:
      "Where each stored variant came from, by variant name ({} for a brand without artwork; the asset routes send the same value as X-Asset-Provenance). catalog: an icon package of the catalog build (see artwork for the package and licence); bimi-verified: the brand's BIMI logo with a verified mark certificate (it chains to a mark verifying authority's root, is valid, carries the BIMI usage, names the brand's domain and hashes to the logo); bimi: the brand's BIMI logo without a verified mark; website: the brand's own website over https; website-http: the brand's website over plain http (its https port refused connections; replaced by the first later read over https, and never verified); pin: set by an operator after a report. A variant derived from the mono mark (dark, light) has the mono mark's provenance.",
  },
);

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

/** Where one source's artwork comes from (Brand.artwork in src/catalog/built-catalog.ts). */
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
  provenance: VariantProvenance,
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
