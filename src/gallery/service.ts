import type { AssetService } from "../assets/service";
import type { SearchIndex } from "../catalog/search/service";
import type { ThumbnailVariant } from "./model";

export interface GalleryMatch {
  slug: string;
  name: string;
  brandColor: string | null;
}

export interface Thumbnail {
  png: Uint8Array;
  /** the variant drawn: the one asked for, mono when the brand lacks it, or "placeholder" */
  served: string;
}

/**
 * The public gallery: catalog search and small PNG thumbnails for visitors without a key and
 * for the console's result lists, counted against no account (the controller caps them per IP).
 */
export class GalleryService {
  constructor(
    private search: Pick<SearchIndex, "search">,
    private assets: AssetService,
  ) {}

  find(q: string, limit: number): GalleryMatch[] {
    return this.search
      .search(q, limit)
      .map((b) => ({ slug: b.slug, name: b.name, brandColor: b.brandColor }));
  }

  /** A PNG of at most 128 px; null for an unknown slug. Any variant of the two is allowed. */
  async thumbnail(
    slug: string,
    variant: ThumbnailVariant,
    size: number,
  ): Promise<Thumbnail | null> {
    const resolved = this.assets.resolve(slug, variant, "pro", true);
    if (!resolved) return null;
    const served = this.assets.rasterSource(resolved, size, "png");
    const cached = this.assets.cachedRaster(served, size, "png");
    if (cached) return { png: cached, served: served.variant };
    const out = await this.assets.raster(served, size, "png");
    return { png: out.bytes, served: out.source.variant };
  }
}
