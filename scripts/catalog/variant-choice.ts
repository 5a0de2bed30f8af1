/**
 * Which artwork becomes which variant.
 *
 * - mono: the simple-icons mark exactly as simple-icons ships it (black, no fill attribute),
 *   not recoloured to the brand colour: it stays a neutral single-colour mark that CSS can
 *   recolour (`fill`) and the runtime's dark/light derivation can start from. Brands without
 *   a simple-icons mark get mono only from artwork that really is single-colour black/grey
 *   (logos' "-mono"/"-monochrome" names or an icon mark drawn in one grey).
 * - color: the symbol (the same kind of mark as mono and icon) in its real colours.
 *   Multi-colour artwork (a chromatic colour, or black and white together) wins over
 *   single-colour artwork: logos "x-icon", a logos "x" narrower than 3:2, devicon's original mark. A brand
 *   drawn in one colour (GitHub's near-black) keeps that artwork. A wordmark is never `color`
 *   (Stripe's wide logos "stripe" is its wordmark; its colour mark is the S in the brand colour,
 *   made by variant-rules.ts). A skill-icons tile is used only when no logos/devicon artwork
 *   exists at all.
 * - wordmark: logos "x" when the set also has "x-icon" or "x" is wide (the logo with its
 *   lettering), else devicon "x-wordmark".
 * - icon: logos "x-icon", else a logos "x" narrower than 3:2 (no separate icon exists), else
 *   devicon "x".
 * - dark: logos' own reversed artwork ("-dark", "-icon-dark") where it exists; every other
 *   dark and every light variant is made after optimization (scripts/catalog/variant-rules.ts).
 *   skill-icons "-dark"/"-light" tiles sit on opaque squares and are only a last-resort colour tile.
 */
import type { Variant } from "../../src/catalog/built-catalog";
import { type ArtworkColors, analyzeColors } from "./artwork";
import type { DraftBrand, IconCandidate } from "./draft";
import { CARD_BADGE, MONOGRAM } from "./folds";
import { iconToSvg } from "./iconify";
import { sourceOf } from "./sources";
import { THESVG_SOURCE, type TheSvgIcon } from "./thesvg";

export interface ChosenArtwork {
  svg: string;
  source: string;
  colors: ArtworkColors;
}

const PENALTY: Record<string, number> = {
  alt: 2,
  round: 2,
  clean: -1,
  vertical: 3,
  color: 0,
  "2020": -1,
  // folded variants of the brand's mark (folds.ts): after its plain mark
  [MONOGRAM]: 3,
  alternate: 2,
  circle: 2,
  square: 2,
  stroke: 2,
  symbol: 2,
  simple: 2,
  reverse: 2,
};
const UNUSABLE = new Set(["dark", "light", "classic", "old"]);
/** never a variant of any set: older artwork, and a card badge (the mark on a card outline) */
const RETIRED = new Set(["old", "legacy", CARD_BADGE]);

function aspect(c: IconCandidate): number {
  const { width, height, rotate } = c.icon;
  return rotate % 2 ? height / width : width / height;
}

/** Under 3:2, a logos "x" is the symbol (or a stacked lockup); wider, it is the wordmark. */
const isWide = (c: IconCandidate) => aspect(c) >= 1.5;

function rank(c: IconCandidate): number {
  let score = (c.alias ? 5 : 0) + (c.direct ? 0 : 4);
  for (const mod of c.mods) score += PENALTY[mod] ?? 0;
  return score;
}

function best(list: IconCandidate[]): IconCandidate | undefined {
  return [...list].sort((a, b) => rank(a) - rank(b) || a.icon.name.localeCompare(b.icon.name))[0];
}

/** The brand's skill-icons tile (its app-icon artwork), for fixtures/artwork-overrides.json. */
export function skillTile(brand: DraftBrand): ChosenArtwork | null {
  const tile = best(brand.candidates.filter((c) => c.set === "skill-icons" && c.mods.size === 0));
  if (!tile) return null;
  return {
    svg: iconToSvg(tile.icon, brand.name),
    source: sourceOf("skill-icons"),
    colors: analyzeColors(tile.icon.body),
  };
}

const rawArt = (svg: string): ChosenArtwork => ({
  svg,
  source: THESVG_SOURCE,
  colors: analyzeColors(svg),
});

/** width / height of an SVG's viewBox (or width/height attributes), 1 when unknown */
export function svgAspect(svg: string): number {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? "";
  const vb = /viewBox="([^"]+)"/
    .exec(root)?.[1]
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  const w = vb?.[2] ?? Number.parseFloat(/\swidth="([\d.]+)/.exec(root)?.[1] ?? "");
  const h = vb?.[3] ?? Number.parseFloat(/\sheight="([\d.]+)/.exec(root)?.[1] ?? "");
  return w > 0 && h > 0 ? w / h : 1;
}

const DRAWING = /<(path|rect|circle|ellipse|line|polyline|polygon|text|use|image)\b/i;

/**
 * Why an SVG of any source draws nothing at any size, or null when it draws: a root viewBox of
 * zero (or no) width or height (an export error upstream, logitech-g's thesvg mark), or no
 * drawing element at all. Such artwork is left out before it becomes a variant.
 */
export function undrawable(svg: string): string | null {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0];
  if (!root) return "no svg root";
  const box = /\sviewBox="([^"]*)"/.exec(root)?.[1];
  if (box !== undefined) {
    const [, , w, h] = box
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (!((w ?? 0) > 0 && (h ?? 0) > 0)) return "viewBox of zero size";
  }
  if (!DRAWING.test(svg)) return "nothing drawn";
  return null;
}

/** black only (or no paint at all): a mono mark as simple-icons ships them */
const blackOnly = (a: ChosenArtwork) =>
  !a.colors.multiColor &&
  a.colors.distinct.every((c) => c === "000000") &&
  (a.colors.distinct.length > 0 || a.colors.implicitBlack);

/**
 * @thesvg/icons artwork. For a brand no other set draws: a wide default mark is the wordmark,
 * a square one the colour mark and icon, and its black mono variant (or black default mark)
 * the mono mark; other mono marks are derived like any brand's. For a brand other sets draw,
 * only a missing wordmark is filled (their colour marks are kept as they are).
 */
function addTheSvg(
  out: Partial<Record<Variant, ChosenArtwork>>,
  icon: TheSvgIcon,
  only: boolean,
): void {
  const main = rawArt(icon.svg);
  const wide = svgAspect(icon.svg) >= 1.5;
  if (wide) out.wordmark ??= main;
  if (icon.wordmark) out.wordmark ??= rawArt(icon.wordmark);
  if (!only) return;
  if (!wide) {
    out.color ??= main;
    out.icon ??= main;
  }
  const mono = icon.mono ? rawArt(icon.mono) : null;
  if (!out.mono && mono && svgAspect(mono.svg) < 1.5 && blackOnly(mono)) out.mono = mono;
  else if (!out.mono && !wide && blackOnly(main)) out.mono = main;
}

export function chooseVariants(brand: DraftBrand): Partial<Record<Variant, ChosenArtwork>> {
  const of = (set: string) =>
    brand.candidates.filter((c) => c.set === set && ![...c.mods].some((m) => RETIRED.has(m)));
  const usable = (c: IconCandidate) => ![...c.mods].some((m) => UNUSABLE.has(m));
  const logos = of("logos").filter(usable);
  const monoMods = (c: IconCandidate) => c.mods.has("mono") || c.mods.has("monochrome");
  const logosIcon = best(logos.filter((c) => c.mods.has("icon") && !monoMods(c)));
  const logosFull = best(logos.filter((c) => !c.mods.has("icon") && !monoMods(c)));
  const logosMono = best(logos.filter(monoMods));
  const devicon = of("devicon");
  const devOriginal = best(devicon.filter((c) => !c.mods.has("wordmark")));
  const devWordmark = best(devicon.filter((c) => c.mods.has("wordmark")));
  const skill = of("skill-icons");
  const skillTile =
    best(skill.filter((c) => c.mods.size === 0)) ??
    best(skill.filter((c) => c.mods.has("dark"))) ??
    best(skill.filter((c) => c.mods.has("light")));

  // the single-colour sets: marks (cib, fa6-brands, bxl, streamline solid),
  // lobehub's mono, colour and text marks
  const plain = (c: IconCandidate) => c.mods.size === 0;
  const lobe = of("lobehub").filter((c) => !c.mods.has("cn"));
  const lobeMono = best(lobe.filter(plain));
  const lobeColor = best(lobe.filter((c) => c.mods.has("color") && !c.mods.has("brand")));
  const lobeText = best(lobe.filter((c) => c.mods.has("text")));
  const lobeBrand =
    best(lobe.filter((c) => c.mods.has("brand") && c.mods.has("color"))) ??
    best(lobe.filter((c) => c.mods.has("brand")));
  const setMono =
    lobeMono ??
    best(of("cib").filter(plain)) ??
    best(of("fa6-brands").filter(plain)) ??
    best(of("bxl").filter(plain)) ??
    best(
      of("streamline-logos").filter((c) => c.mods.has("solid") && !/\d/.test([...c.mods].join())),
    ) ??
    best(of("cib")) ??
    best(of("fa6-brands")) ??
    best(of("streamline-logos").filter((c) => c.mods.has("solid"))) ??
    best(of("tabler").filter((c) => c.mods.has("filled"))) ??
    best(of("tabler"));

  const cache = new Map<IconCandidate, ChosenArtwork>();
  const art = (c: IconCandidate): ChosenArtwork => {
    let found = cache.get(c);
    if (!found) {
      const svg = iconToSvg(c.icon, brand.name);
      found = { svg, source: sourceOf(c.set), colors: analyzeColors(c.icon.body) };
      cache.set(c, found);
    }
    return found;
  };
  const defined = (list: (IconCandidate | undefined)[]) =>
    list.filter((c): c is IconCandidate => c !== undefined);

  const out: Partial<Record<Variant, ChosenArtwork>> = {};
  const squareFull = logosFull && !isWide(logosFull) ? logosFull : undefined;

  // the symbol in full colour; a brand drawn in one colour (GitHub's black) keeps that
  // artwork; a wordmark never becomes `color` (it fills `wordmark` below); skill-icons tiles
  // only when no logo artwork exists
  const colorOrder = defined([logosIcon, squareFull, devOriginal]);
  const colorPick = colorOrder.find((c) => art(c).colors.multiColor) ?? colorOrder[0];
  if (colorPick) out.color = art(colorPick);
  else if (lobeColor) out.color = art(lobeColor);
  else if (skillTile && !logosFull && !devWordmark) out.color = art(skillTile);

  if (logosFull && (logosIcon || isWide(logosFull))) out.wordmark = art(logosFull);
  else if (devWordmark) out.wordmark = art(devWordmark);
  else if (lobeBrand ?? lobeText) out.wordmark = art((lobeBrand ?? lobeText) as IconCandidate);

  const iconPick = logosIcon ?? squareFull ?? devOriginal ?? lobeColor;
  if (iconPick) out.icon = art(iconPick);

  // a source's own reversed artwork for dark backgrounds (logos "vite-dark", "x-ai-dark")
  const logosDark = of("logos").filter((c) => c.mods.has("dark") && !monoMods(c));
  const reversed =
    best(logosDark.filter((c) => c.mods.has("icon"))) ??
    best(logosDark.filter((c) => !c.mods.has("icon")));
  if (reversed) out.dark = art(reversed);

  if (brand.siSvg) {
    out.mono = { svg: brand.siSvg, source: "simple-icons", colors: analyzeColors(brand.siSvg) };
  } else {
    const monoPick =
      logosMono ??
      defined([logosIcon, squareFull, devOriginal]).find((c) => !art(c).colors.multiColor);
    if (monoPick) out.mono = art(monoPick);
    else if (setMono) out.mono = art(setMono);
  }
  if (brand.thesvg) addTheSvg(out, brand.thesvg, brand.sources.size === 1);
  return out;
}
