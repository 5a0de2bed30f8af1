/**
 * Build step 4, variants: the stored variants of every brand from its optimized artwork, the
 * derived mono marks, the brand colours, the variant rules for color/dark/light
 * (scripts/catalog/variant-rules.ts) and the render check of every colour variant
 * (scripts/catalog/render-check.ts), both cached by content.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Brand, VARIANTS } from "../../../src/catalog/built-catalog";
import { deriveBrandColors, dominantColor } from "../../../src/catalog/colors";
import { packageVersion } from "../inputs";
import { recolor } from "../modes";
import { deriveMono } from "../mono";
import { jobKey, sha256, withIdPrefix } from "../optimize";
import { artworkProvenance } from "../provenance";
import { renderFlagsAll } from "../render-check";
import { THESVG_PACKAGE } from "../thesvg";
import { applyVariantRules, type RuleBrand, type RulesReport } from "../variant-rules";
import { WEB3_PACKAGE } from "../web3icons";
import { web3Provenance } from "../web3icons-merge";
import { type BuildPaths, type Phase, writeAtomic } from "./context";
import type { Fixtures } from "./load";
import { type ChosenVariants, job, monoSources, type Optimized, type Usable } from "./normalise";

/** A stored variant: the raw optimized SVG with its ids prefixed by variant and slug. */
export const storedSvg = (rawSvg: string, variant: string, slug: string, source: string) => {
  const svg = withIdPrefix(rawSvg, `${variant}-${slug}`);
  return { svg, sha256: sha256(svg), source };
};

export interface MonoReport {
  fromIcon: number;
  fromColor: number;
  /** from the wordmark of a brand that has no other artwork */
  fromWordmark: number;
  /** from a near-white colour mark made for dark surfaces (variant-rules.ts) */
  fromDarkSurface: number;
  forced: number;
  /** slug -> why no mono mark was derived */
  skipped: Map<string, string>;
}

/** A mono report with nothing counted yet. */
export const newMonoReport = (): MonoReport => ({
  fromIcon: 0,
  fromColor: 0,
  fromWordmark: 0,
  fromDarkSurface: 0,
  forced: 0,
  skipped: new Map(),
});

/**
 * The derived mono mark of a brand without one (ids still carry ID_TOKEN) and its source,
 * or null. The source is "flattened:<artwork source>", never "derived...": the runtime
 * enrichment (src/catalog/enrichment/service.ts) treats every "derived*" variant as its own output,
 * so it would neither colour dark/light from such a mono mark nor keep it.
 */
export function derivedMono(
  slug: string,
  v: ChosenVariants,
  { results, monos }: Pick<Optimized, "results" | "monos">,
  overrides: Fixtures["mono"],
  report: MonoReport,
): { svg: string; source: string } | null {
  const sources = monoSources(v);
  if (!sources.length) return null;
  const skip = overrides.skip[slug];
  if (skip !== undefined) {
    report.skipped.set(slug, `override: ${skip}`);
    return null;
  }
  const force = overrides.derive[slug] !== undefined;
  let firstReason: string | null = null;
  for (const art of sources) {
    const key = jobKey(job(art));
    const optimized = results.get(key);
    const mono = force && optimized ? deriveMono(optimized, { force }) : monos.get(key);
    if (mono && "svg" in mono) {
      if (force) report.forced++;
      else if (art === v.icon) report.fromIcon++;
      else if (art === v.color) report.fromColor++;
      else report.fromWordmark++;
      return { svg: mono.svg, source: `flattened:${art.source}` };
    }
    firstReason ??= mono?.skipped ?? "could not be processed";
  }
  report.skipped.set(slug, firstReason ?? "no artwork");
  return null;
}

/** Throws on an override naming a slug the catalog does not have. */
export function checkOverrideSlugs(fixtures: Fixtures, usable: Usable[], drafts: string[]): void {
  const knownSlugs = new Set(usable.map((c) => c.draft.slug));
  for (const slug of [...Object.keys(fixtures.mono.derive), ...Object.keys(fixtures.mono.skip)]) {
    if (!knownSlugs.has(slug)) throw new Error(`mono override for unknown slug ${slug}`);
  }
  const draftSlugs = new Set(drafts);
  for (const slug of Object.keys(fixtures.artwork)) {
    if (!slug.startsWith("$") && !draftSlugs.has(slug)) {
      throw new Error(`artwork override for unknown slug ${slug}`);
    }
  }
}

/** One brand's stored variants and colours, and the raw artwork the variant rules start from. */
export function assembleBrand(
  { draft, variants }: Usable,
  id: number,
  optimized: Pick<Optimized, "results" | "monos">,
  fixtures: Pick<Fixtures, "mono" | "colors" | "artwork">,
  monoReport: MonoReport,
): { brand: Brand; rule: RuleBrand; colorFromArtwork: boolean } | null {
  const stored: Brand["variants"] = {};
  const raw: RuleBrand["raw"] = {};
  for (const variant of VARIANTS) {
    const art = variants[variant];
    const svg = art ? optimized.results.get(jobKey(job(art))) : null;
    if (!art || !svg) continue;
    raw[variant] = { svg, source: art.source };
    stored[variant] = storedSvg(svg, variant, draft.slug, art.source);
  }
  const derived = derivedMono(draft.slug, variants, optimized, fixtures.mono, monoReport);
  if (derived) {
    raw.mono = derived;
    stored.mono = storedSvg(derived.svg, "mono", draft.slug, derived.source);
  }
  const monoRaw = raw.mono?.svg;
  // a mono mark flattened from the wordmark never becomes `color` (a wordmark is never `color`)
  const monoOfWordmark = derived !== null && !variants.icon && !variants.color;
  if (!Object.keys(stored).length) return null;
  let brandHex = draft.hex;
  let colorSource = "simple-icons";
  let colorFromArtwork = false;
  const override = fixtures.colors[draft.slug];
  if (override) {
    brandHex = override.hex;
    colorSource = "override";
  }
  if (!brandHex) {
    const art = variants.color ?? variants.icon ?? variants.wordmark ?? variants.mono;
    const occurrences = art?.colors.occurrences ?? [];
    brandHex = dominantColor(occurrences.length ? occurrences : ["000000"]);
    colorSource = "artwork";
    colorFromArtwork = true;
  }
  const colors = brandHex ? deriveBrandColors(brandHex, colorSource) : null;
  if (fixtures.artwork[draft.slug]?.color === "recolor-mono" && monoRaw && stored.mono && colors) {
    // the mono mark in the brand colour (Netflix's N without the logos icon's black square)
    raw.color = {
      svg: recolor(monoRaw, colors.brandColor),
      source: `recolored:${stored.mono.source}`,
    };
    stored.color = storedSvg(raw.color.svg, "color", draft.slug, raw.color.source);
    raw.icon = raw.color;
    stored.icon = storedSvg(raw.icon.svg, "icon", draft.slug, raw.icon.source);
  }
  return {
    rule: { slug: draft.slug, brandColor: colors?.brandColor ?? null, raw, monoOfWordmark },
    colorFromArtwork,
    brand: {
      id,
      slug: draft.slug,
      name: draft.name,
      brandColor: colors?.brandColor ?? null,
      darkModeColor: colors?.darkModeColor ?? null,
      contrastTextColor: colors?.contrastTextColor ?? null,
      colors: colors?.colors ?? [],
      aliases: draft.aliases,
      domains: [],
      sourceUrl: draft.sourceUrl,
      guidelinesUrl: draft.guidelinesUrl,
      sources: [...draft.sources],
      variants: stored,
      verifiedAt: null,
    },
  };
}

const versionOf = (root: string, files: string[]) =>
  sha256(
    files.map((f) => readFileSync(join(root, f), "utf8")).join("\n") +
      packageVersion(root, "@resvg/resvg-js"),
  ).slice(0, 12);

interface ColourCheck {
  slug: string;
  color: NonNullable<Brand["variants"]["color"]>;
  brandHex: string | null;
}

/** The render check of every colour variant, cached by sha256: "slug: flag (source)" lines. */
async function renderCheck(
  paths: BuildPaths,
  toCheck: ColourCheck[],
): Promise<{ lines: string[]; misses: number }> {
  const version = versionOf(paths.root, ["scripts/catalog/render-check.ts"]);
  const cache: Record<string, string[]> = existsSync(paths.renderCacheFile)
    ? JSON.parse(readFileSync(paths.renderCacheFile, "utf8"))
    : {};
  const next: Record<string, string[]> = {};
  const key = (c: ColourCheck) => `${version}:${c.color.sha256}:${c.brandHex}`;
  const misses = toCheck.filter((c) => !cache[key(c)]);
  const fresh = await renderFlagsAll(
    misses.map((c) => ({ svg: c.color.svg, brandHex: c.brandHex })),
  );
  misses.forEach((c, i) => {
    cache[key(c)] = fresh[i] ?? [];
  });
  const lines: string[] = [];
  for (const c of toCheck) {
    const flags = cache[key(c)] ?? [];
    next[key(c)] = flags;
    for (const flag of flags) lines.push(`${c.slug}: ${flag} (${c.color.source})`);
  }
  writeAtomic(paths.renderCacheFile, JSON.stringify(next));
  return { lines, misses: misses.length };
}

export interface VariantsResult {
  /** sorted by id */
  brands: Brand[];
  monoReport: MonoReport;
  rules: RulesReport;
  colorFromArtwork: number;
  /** colour variants rendered by the render check, and how many were not cached */
  checked: number;
  misses: number;
  renderFlags: string[];
}

export async function buildVariants(
  paths: BuildPaths,
  usable: Usable[],
  optimized: Optimized,
  ids: Record<string, number>,
  fixtures: Fixtures,
  phase: Phase,
): Promise<VariantsResult> {
  const monoReport = newMonoReport();
  const brands: Brand[] = [];
  const ruleInputs: RuleBrand[] = [];
  let colorFromArtwork = 0;
  for (const u of usable) {
    const made = assembleBrand(u, ids[u.draft.slug] as number, optimized, fixtures, monoReport);
    if (!made) continue;
    brands.push(made.brand);
    ruleInputs.push(made.rule);
    if (made.colorFromArtwork) colorFromArtwork++;
  }
  // a colour mark made for dark surfaces without a mono mark: flattened with its white paint
  // as ink, unless a mono override says skip
  const darkSurfaceMono = (slug: string, svg: string) => {
    if (fixtures.mono.skip[slug] !== undefined) return null;
    const mono = deriveMono(svg, { darkSurface: true });
    if (!("svg" in mono)) return null;
    monoReport.skipped.delete(slug);
    monoReport.fromDarkSurface++;
    return mono.svg;
  };
  const rules = await applyVariantRules(
    ruleInputs,
    {
      file: paths.paintCacheFile,
      version: versionOf(paths.root, ["scripts/catalog/paint.ts", "scripts/catalog/modes.ts"]),
    },
    darkSurfaceMono,
  );
  writeAtomic(paths.paintCacheFile, rules.cache);
  const toCheck: ColourCheck[] = [];
  for (const b of brands) {
    const r = rules.results.get(b.slug);
    for (const variant of ["color", "icon", "mono", "dark", "light"] as const) {
      const art = r?.[variant];
      if (art) b.variants[variant] = storedSvg(art.svg, variant, b.slug, art.source);
    }
    if (b.variants.color) {
      toCheck.push({ slug: b.slug, color: b.variants.color, brandHex: b.brandColor });
    }
  }
  phase(
    "rules",
    `${rules.report.measured} SVGs measured on pixels (${rules.report.rendered} rendered), ` +
      `${rules.report.fallbacks.length} fallbacks, ${rules.report.foreign} derived variants with a foreign hue`,
  );
  brands.sort((a, b) => a.id - b.id);
  const thesvgVersion = packageVersion(paths.root, THESVG_PACKAGE);
  const iconOf = new Map(usable.map((u) => [u.draft.slug, u.draft.thesvg]));
  const web3Version = packageVersion(paths.root, WEB3_PACKAGE);
  const web3Of = new Map(usable.map((u) => [u.draft.slug, u.draft.web3]));
  for (const b of brands) {
    const icon = iconOf.get(b.slug);
    b.artwork = artworkProvenance(b, icon ? { icon, version: thesvgVersion } : undefined);
    web3Provenance(b.artwork, web3Of.get(b.slug), web3Version);
  }
  const render = await renderCheck(paths, toCheck);
  phase(
    "colors",
    `${brands.length} brands, ${colorFromArtwork} brand colours taken from artwork; ` +
      `mono marks derived for ${monoReport.fromIcon + monoReport.fromColor + monoReport.fromWordmark + monoReport.fromDarkSurface + monoReport.forced}, skipped for ${monoReport.skipped.size}`,
  );
  return {
    brands,
    monoReport,
    rules: rules.report,
    colorFromArtwork,
    checked: toCheck.length,
    misses: render.misses,
    renderFlags: render.lines,
  };
}
