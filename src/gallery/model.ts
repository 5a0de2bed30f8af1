import { t } from "elysia";
import { queryEnum, queryInt } from "../http/params";
import type { RatePolicy } from "../quota/limits";

/** Public gallery searches: 30 per minute per client IP. */
export const GALLERY_SEARCH_LIMIT: RatePolicy = {
  name: "gallery-search",
  limit: 30,
  windowSeconds: 60,
  label: "GET /v1/gallery/search",
};

/** Public gallery thumbnails: 240 per minute per client IP. */
export const GALLERY_THUMBNAIL_LIMIT: RatePolicy = {
  name: "gallery-thumbnail",
  limit: 240,
  windowSeconds: 60,
  label: "GET /v1/gallery/{slug}/thumbnail",
};

export const GALLERY_MAX_RESULTS = 12;
export const THUMBNAIL_SIZES = { min: 16, max: 128, default: 64 } as const;
export const THUMBNAIL_VARIANTS = ["mono", "color"] as const;
export type ThumbnailVariant = (typeof THUMBNAIL_VARIANTS)[number];

export const GallerySearchQuery = t.Object({
  q: t.String({
    minLength: 1,
    maxLength: 100,
    description: "Brand name, slug or domain words",
    error: "Invalid query parameter q: 1 to 100 characters",
  }),
  limit: t.Optional(queryInt("limit", 1, GALLERY_MAX_RESULTS, 8)),
});

export const GalleryMatch = t.Object({
  slug: t.String(),
  name: t.String(),
  brandColor: t.Union([t.String({ description: "hex without #" }), t.Null()]),
});

export const GallerySearchResponse = t.Object({
  matches: t.Array(GalleryMatch, { description: "Best matches first" }),
});

export const ThumbnailQuery = t.Object({
  variant: t.Optional(queryEnum<ThumbnailVariant>("variant", THUMBNAIL_VARIANTS, "mono")),
  size: t.Optional(
    queryInt("size", THUMBNAIL_SIZES.min, THUMBNAIL_SIZES.max, THUMBNAIL_SIZES.default),
  ),
});
