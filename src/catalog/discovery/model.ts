import { t } from "elysia";
import { VariantName } from "../model";

const Variant = VariantName;
const Status = t.Union(
  [
    t.Literal("found"),
    t.Literal("nothing"),
    t.Literal("refused"),
    t.Literal("failed"),
    t.Literal("taken_down"),
  ],
  {
    description:
      "found: artwork stored; nothing: no brand or no usable logo; refused: an SSRF rule stopped it; failed: network, size or time; taken_down: removed for good by an operator",
  },
);

export const DiscoveredAssetView = t.Object({
  variant: Variant,
  sourceUrl: t.String({
    description: "The URL fetched (inline SVG: the page URL with #inline-svg)",
  }),
  fetchedAt: t.String({ format: "date-time" }),
  sha256: t.String({ description: "sha256 hex of the bytes as fetched" }),
  kind: t.Union([t.Literal("svg"), t.Literal("raster")]),
  width: t.Integer(),
  height: t.Integer(),
  score: t.Number(),
  origin: t.String({
    description:
      "Where in the page it was found (link-icon-svg, apple-touch-icon, favicon.ico, ...)",
  }),
  lowRes: t.Optional(
    t.Boolean({
      description:
        "true for a raster under 32 px, kept because the site has nothing larger; replaced when it does",
    }),
  ),
  verifiedMark: t.Optional(
    t.Boolean({
      description:
        "BIMI only: whether the mark certificate named by the record passed every check (see bimi.failed)",
    }),
  ),
  provenance: t.Optional(
    t.Union(
      [
        t.Literal("bimi-verified"),
        t.Literal("bimi"),
        t.Literal("website"),
        t.Literal("website-http"),
      ],
      {
        description:
          "How it was obtained: the BIMI logo with or without a verified mark, the website over https, or over plain http (never verified; replaced by the first later read over https)",
      },
    ),
  ),
  etag: t.Optional(
    t.String({ description: "The response's ETag (the refresh's conditional GET)" }),
  ),
  lastModified: t.Optional(
    t.String({ description: "The response's Last-Modified (the refresh's conditional GET)" }),
  ),
});

const BimiCheckView = t.Object(
  {
    logo: t.String({ description: "The record's l= URL" }),
    certificate: t.Union([t.String(), t.Null()], { description: "The record's a= URL" }),
    verifiedMark: t.Boolean({ description: "true only when the certificate passed every check" }),
    failed: t.Array(
      t.Object({
        check: t.String({
          description:
            "certificate (not fetched or unreadable), chain, self_signed, validity, usage (the BIMI extended key usage), domain, logotype or hash",
        }),
        reason: t.String(),
      }),
      { description: "Each failed check of the mark certificate" },
    ),
    unusable: t.Optional(
      t.String({
        description: "Why the logo itself is not used (not https, too large, not square ...)",
      }),
    ),
    organization: t.Optional(t.Union([t.String(), t.Null()])),
    notAfter: t.Optional(t.Union([t.String(), t.Null()])),
  },
  { description: "The domain's BIMI record and how its logo and mark certificate fared" },
);

const VariantHashes = t.Record(t.String(), t.String(), {
  description: "sha256 of each variant the replaced artwork had",
});

export const DiscoveryView = t.Object({
  domain: t.String(),
  status: Status,
  at: t.String({ format: "date-time", description: "When the attempt ended" }),
  reason: t.Union([t.String(), t.Null()]),
  brandId: t.Union([t.Integer(), t.Null()]),
  slug: t.Union([t.String(), t.Null()]),
  created: t.Boolean({ description: "true when discovery created the catalog entry" }),
  name: t.Union([t.String(), t.Null()]),
  brandColor: t.Union([t.String(), t.Null()]),
  pageUrl: t.Union([t.String(), t.Null()]),
  aliases: t.Array(t.String(), { description: "Other registrable domains the site redirected to" }),
  redirects: t.Optional(
    t.Array(t.String(), {
      description:
        "The home page's redirect chain, each URL that redirected; what is found belongs to the domain's own brand wherever it leads",
    }),
  ),
  variants: t.Array(Variant),
  assets: t.Array(DiscoveredAssetView),
  bimi: t.Optional(BimiCheckView),
  pageValidators: t.Optional(
    t.Object({ etag: t.Optional(t.String()), lastModified: t.Optional(t.String()) }),
  ),
  refreshAt: t.Optional(
    t.String({ format: "date-time", description: "Found: when the domain is checked again" }),
  ),
  change: t.Optional(
    t.Union([t.Literal("new"), t.Literal("unchanged"), t.Literal("replaced")], {
      description:
        "Found: the domain's first artwork, a check that found the same artwork, or other artwork that replaced the old",
    }),
  ),
  previous: t.Optional(VariantHashes),
  pinned: t.Optional(
    t.Array(Variant, {
      description: "Variants an operator's pin held when this was stored (the pin stays served)",
    }),
  ),
});

export const DiscoveryList = t.Object({
  items: t.Array(DiscoveryView),
  total: t.Integer(),
  stats: t.Object(
    {
      queued: t.Integer(),
      running: t.Integer(),
      dropped: t.Integer(),
      found: t.Integer(),
      nothing: t.Integer(),
      refused: t.Integer(),
      failed: t.Integer(),
    },
    { description: "This instance's queue and outcomes since it started" },
  ),
});

export const DiscoverBody = t.Object({
  domains: t.Array(t.String({ minLength: 3, maxLength: 253 }), { minItems: 1, maxItems: 20 }),
  force: t.Optional(t.Boolean({ description: "Fetch again even if tried today or already found" })),
});

export const DiscoverResult = t.Object({
  results: t.Array(DiscoveryView),
  summary: t.Record(t.String(), t.Integer(), { description: "Number of domains per status" }),
});

export const DomainParams = t.Object({ domain: t.String({ minLength: 3, maxLength: 253 }) });

export const ListQuery = t.Object({
  status: t.Optional(Status),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500, default: 100 })),
  offset: t.Optional(t.Integer({ minimum: 0, default: 0 })),
});
