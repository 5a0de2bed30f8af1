import type { DraftBrand } from "../../../../scripts/catalog/merge";

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

export { brandOf } from "../../../support/catalog";
