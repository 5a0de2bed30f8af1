/**
 * Build step 3, normalise: each draft's artwork chosen per variant (scripts/catalog/variant-choice.ts),
 * slugs checked and given stable ids (fixtures/brand-ids.json), and every SVG sanitized and
 * optimized with svgo, with a mono mark derived where a brand has none (scripts/catalog/optimize.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Variant } from "../../../src/catalog/built-catalog";
import type { DraftBrand } from "../icon-sets";
import { assignIds, formatIds, loadIds } from "../ids";
import { packageVersion } from "../inputs";
import type { MonoResult } from "../mono";
import { type OptimizeJob, type OptimizeStats, optimizeAll, sha256 } from "../optimize";
import { THESVG_SOURCE } from "../thesvg";
import { type ChosenArtwork, chooseVariants, skillTile, undrawable } from "../variant-choice";
import { WEB3_SOURCE } from "../web3icons";
import { addWeb3Artwork } from "../web3icons-merge";
import { type BuildPaths, writeAtomic } from "./context";
import type { Fixtures } from "./load";

export type ChosenVariants = ReturnType<typeof chooseVariants>;
export interface Usable {
  draft: DraftBrand;
  variants: ChosenVariants;
}

/**
 * simple-icons', thesvg's and web3icons' raw files get svgo's full preset; iconify bodies were
 * path-optimized by Iconify already
 */
export const job = (art: { svg: string; source: string }, mono = false): OptimizeJob => ({
  svg: art.svg,
  paths:
    art.source === "simple-icons" || art.source === THESVG_SOURCE || art.source === WEB3_SOURCE,
  mono,
});

/**
 * A brand without a mono mark gets one derived from its icon, else its colour artwork; a brand
 * whose only artwork is its wordmark (CrowdStrike, AstraZeneca), from the wordmark, so `mono`
 * is a single-colour mark and not the coloured wordmark the fallback order would serve.
 */
export const monoSources = (v: ChosenVariants): ChosenArtwork[] => {
  if (v.mono) return [];
  const symbols = [...new Set([v.icon, v.color])].filter((a) => a !== undefined);
  return symbols.length || !v.wordmark ? symbols : [v.wordmark];
};

/**
 * The artwork of every draft per variant; artwork of any source that draws nothing
 * (`undrawable`) is left out and listed ("slug variant source: reason"), and drafts without
 * usable artwork are left out.
 */
export function chooseArtwork(
  drafts: DraftBrand[],
  artwork: Fixtures["artwork"],
): { usable: Usable[]; dropped: number; undrawn: string[] } {
  const undrawn: string[] = [];
  const chosen = drafts.map((draft) => {
    const variants = chooseVariants(draft);
    addWeb3Artwork(draft, variants);
    if (artwork[draft.slug]?.color === "skill-icons") {
      const tile = skillTile(draft);
      if (!tile) throw new Error(`artwork override: ${draft.slug} has no skill-icons tile`);
      variants.color = tile;
      variants.icon = tile;
    }
    for (const [variant, art] of Object.entries(variants) as [Variant, ChosenArtwork][]) {
      const why = undrawable(art.svg);
      if (!why) continue;
      undrawn.push(`${draft.slug} ${variant} ${art.source}: ${why}`);
      delete variants[variant];
    }
    return { draft, variants };
  });
  const usable = chosen.filter((c) => Object.keys(c.variants).length > 0);
  return { usable, dropped: chosen.length - usable.length, undrawn };
}

/** The optimize jobs of the chosen artwork, mono derivation flagged where needed. */
export function optimizeJobs(usable: Usable[]): OptimizeJob[] {
  return usable.flatMap((c) => {
    const derive = monoSources(c.variants);
    return Object.values(c.variants).flatMap((v) => (v ? [job(v, derive.includes(v))] : []));
  });
}

/** Throws on duplicate or non-URL-safe slugs. */
export function checkSlugs(slugs: string[]): void {
  if (new Set(slugs).size !== slugs.length) throw new Error("duplicate slugs");
  const bad = slugs.filter((s) => !/^[a-z0-9][a-z0-9_-]*$/.test(s));
  if (bad.length) throw new Error(`slugs not URL-safe: ${bad.join(", ")}`);
}

/** Stable ids for `slugs`, new ones appended to the ids file. */
export function idsFor(
  idsFile: string,
  slugs: string[],
  known = loadIds(idsFile),
): { ids: Record<string, number>; added: string[] } {
  const result = assignIds(known, slugs);
  if (result.added.length) writeAtomic(idsFile, formatIds(result.ids));
  return result;
}

export interface Optimized {
  results: Map<string, string | null>;
  monos: Map<string, MonoResult>;
  stats: OptimizeStats;
}

/** svgo over every job, cached by content and by the versions of the pipeline's code. */
export function optimize(paths: BuildPaths, inputs: OptimizeJob[]): Promise<Optimized> {
  const { root } = paths;
  const pipeline = sha256(
    readFileSync(join(root, "src/catalog/sanitize.ts"), "utf8") +
      JSON.parse(readFileSync(join(root, "node_modules/svgo/package.json"), "utf8")).version,
  );
  const monoVersion = sha256(
    ["scripts/catalog/mono.ts", "scripts/catalog/artwork.ts", "src/catalog/colors.ts"]
      .map((f) => readFileSync(join(root, f), "utf8"))
      .join("\n") + packageVersion(root, "@resvg/resvg-js"),
  );
  return optimizeAll(inputs, paths.svgoCacheFile, pipeline, monoVersion);
}
