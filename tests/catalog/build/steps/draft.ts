import { resolve } from "node:path";
import type { DraftBrand, IconCandidate } from "../../../../scripts/catalog/icon-sets";
import { resolveIcon } from "../../../../scripts/catalog/iconify";
import { loadSet, type SetId } from "../../../../scripts/catalog/sources";

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

/** A candidate of a real icon of an installed set, as merge.ts makes it. */
export function iconCandidate(set: SetId, name: string, mods: string[] = []): IconCandidate {
  const { set: icons } = loadSet(resolve(import.meta.dir, "../../../.."), set);
  const icon = resolveIcon(icons, name);
  if (!icon) throw new Error(`${set} has no icon ${name}`);
  return { set, icon, mods: new Set(mods), alias: false, direct: true };
}

export { brandOf } from "../../../support/catalog";
