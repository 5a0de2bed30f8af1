import type { DraftBrand } from "../../../../scripts/catalog/merge";
import type { Brand } from "../../../../src/catalog/types";

/** A draft brand for the step tests: a simple-icons brand unless told otherwise. */
export function draft(slug: string, over: Partial<DraftBrand> = {}): DraftBrand {
  return {
    key: slug,
    slug,
    name: slug.charAt(0).toUpperCase() + slug.slice(1),
    aliases: [],
    hex: "ff0000",
    sourceUrl: null,
    guidelinesUrl: null,
    extraUrls: [],
    keys: new Set([slug]),
    primaryKeys: new Set([slug]),
    sources: new Set(["simple-icons"]),
    siSvg: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><title>${slug}</title><path d="M0 0h24v24H0z"/></svg>`,
    candidates: [],
    ...over,
  };
}

/** A built brand for the step tests: a directory-style entry unless told otherwise. */
export function brandOf(slug: string, over: Partial<Brand> = {}): Brand {
  return {
    id: 1,
    slug,
    name: slug,
    brandColor: null,
    darkModeColor: null,
    contrastTextColor: null,
    colors: [],
    aliases: [],
    domains: [],
    sourceUrl: null,
    guidelinesUrl: null,
    sources: ["simple-icons"],
    variants: {},
    verifiedAt: null,
    ...over,
  };
}
