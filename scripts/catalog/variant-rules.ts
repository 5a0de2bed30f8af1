/**
 * The variant rules (docs/assets.md, "Variant rules"), applied to every brand at build time:
 *
 * - `color` is the brand's full-colour symbol (variant-choice.ts chooses it from the sources); a
 *   brand with none but with a single-colour mark and a brand colour gets that mark in the
 *   brand colour (Coca-Cola red, Stripe's S in Stripe purple, Nike black).
 * - `dark` / `light`: a source's own artwork for that background when one exists; else the
 *   `color` mark when at least two thirds of its painted area reaches 3:1 (WCAG 1.4.11) on the
 *   surface (#121212 / #ffffff), measured on resvg's pixels; else the colour mark, when it is
 *   one solid colour, or the mono mark, when that is, in plain white (dark) or black (light).
 *   A brand with no solid single-colour mark keeps its colour artwork and is reported as below
 *   the floor.
 * - A near-white colour mark (white or grey paint, no hue, that fails 3:1 on #ffffff and reaches
 *   it on #121212: T3 Stack's) is made for dark surfaces: it is the `dark` variant, and `color`
 *   (with `icon` when that is the same artwork) is the plain black mark that `light` is,
 *   never the mark recoloured into a hue. A colour mark made for dark surfaces (any hue)
 *   without a mono mark gets one flattened from it with its white paint as ink (`darkMono`),
 *   so `light` can be that mark in black; a source's mono mark drawn in white or light grey is
 *   that shape in black.
 * - Fidelity check: no derived variant may paint a hue the brand's own artwork lacks (white,
 *   black and greys aside). The palette is the hues of the brand's source artwork on pixels,
 *   or its brand colour when it has no chromatic artwork. A recoloured `color` with a foreign
 *   hue is dropped; the report lists every brand that fell back.
 *
 * Input and output SVGs are the optimizer's raw results (ids still carry ID_TOKEN); the
 * builder gives each stored variant its id prefix.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Variant } from "../../src/catalog/built-catalog";
import { recolor } from "./modes";
import { sha256, withIdPrefix } from "./optimize";
import {
  foreignHues,
  GRAPHIC_MIN_CONTRAST,
  hueBin,
  MIN_VISIBLE_SHARE,
  type PaintFacts,
  paintFactsAll,
  shapeOverlap,
} from "./paint";

export interface Art {
  /** raw optimized SVG (ids carry ID_TOKEN) */
  svg: string;
  source: string;
}

export interface RuleBrand {
  slug: string;
  brandColor: string | null;
  /** the stored variants so far (chosen from sources, mono possibly flattened) */
  raw: Partial<Record<Variant, Art>>;
  /** the mono mark is flattened from the wordmark (no other artwork): never made `color` */
  monoOfWordmark?: boolean;
}

/** How a dark/light variant was decided. */
export type ModeRule = "source" | "colour" | "plain" | "below-floor";

export interface RuleResult {
  color?: Art;
  /** the icon, when a near-white colour mark that is also the icon became plain black */
  icon?: Art;
  /** a mono mark made here: a white one in black, or one flattened from a dark-surface mark */
  mono?: Art;
  dark?: Art & { rule: ModeRule };
  light?: Art & { rule: ModeRule };
  /** one line per fallback: why the brand's colour mark was not used or made */
  fallbacks: string[];
  /** dark/light kept below the floor: the share of the mark's paint that reaches 3:1 */
  belowFloor?: { variant: "dark" | "light"; share: number }[];
}

const MODES = [
  { variant: "dark", surface: "dark", plain: "ffffff" },
  { variant: "light", surface: "light", plain: "000000" },
] as const;

const PALETTE_SOURCES: Variant[] = ["color", "icon", "wordmark", "dark", "light"];

/** Two silhouettes at least this alike (shapeOverlap) are the same mark. */
export const SAME_MARK = 0.5;

const isRecolored = (art: Art) => art.source.startsWith("recolored:");

type Plain = { dark?: Art; light?: Art };

/** A mark in plain white (for dark) and plain black (for light). */
function plainOf(art: Art): Plain {
  const out: Plain = {};
  for (const m of MODES) {
    out[m.variant] = { svg: recolor(art.svg, m.plain), source: `recolored:${art.source}` };
  }
  return out;
}

/**
 * The candidates of one brand: its colour mark, and the plain white/black marks made from its
 * mono mark and from its source colour artwork (`color`, or `icon` when the icon takes the
 * colour mark's place), used when that is one solid colour, so the plain mark is the same
 * design as `color`: GitHub's octocat, Medium's ellipses.
 */
interface Plan {
  color?: Art;
  madeColor: boolean;
  plain: Plain;
  /** by the source artwork's SVG */
  plainArt: Map<string, Plain>;
}

function plan(b: RuleBrand): Plan {
  const mono = b.raw.mono;
  let color = b.raw.color;
  let madeColor = false;
  if (!color && mono && b.brandColor && !b.monoOfWordmark) {
    color = { svg: recolor(mono.svg, b.brandColor), source: `recolored:${mono.source}` };
    madeColor = true;
  }
  const plainArt = new Map<string, Plain>();
  for (const art of madeColor ? [] : [b.raw.color, b.raw.icon]) {
    if (art) plainArt.set(art.svg, plainOf(art));
  }
  return { color, madeColor, plain: mono ? plainOf(mono) : {}, plainArt };
}

/** Every SVG the rules measure for a brand (its source artwork and its candidates). */
function measured(b: RuleBrand, p: Plan): string[] {
  const out = PALETTE_SOURCES.map((v) => b.raw[v]?.svg);
  out.push(b.raw.mono?.svg, p.color?.svg, p.plain.dark?.svg, p.plain.light?.svg);
  for (const plain of p.plainArt.values()) out.push(plain.dark?.svg, plain.light?.svg);
  return out.filter((s): s is string => s !== undefined);
}

/** The brand's own hues: its source artwork's, else its brand colour's. */
function palette(b: RuleBrand, facts: (svg: string) => PaintFacts | null): Set<number> {
  const hues = new Set<number>();
  for (const v of PALETTE_SOURCES) {
    const art = b.raw[v];
    if (art && !isRecolored(art)) for (const h of facts(art.svg)?.hues ?? []) hues.add(h);
  }
  const own = b.brandColor ? hueBin(b.brandColor) : null;
  if (!hues.size && own !== null) hues.add(own);
  return hues;
}

/** A colour mark made for dark surfaces: under the floor on white, at it on #121212. */
export const darkSurfaceMark = (f: PaintFacts): boolean =>
  f.light < MIN_VISIBLE_SHARE && f.dark >= MIN_VISIBLE_SHARE;

/**
 * A near-white colour mark: made for dark surfaces, with no hue (white or grey paint) and a
 * mean contrast under 3:1 on white. Its colour is no brand hue, so `color` is the black mark.
 */
export const nearWhite = (f: PaintFacts): boolean =>
  darkSurfaceMark(f) && !f.hues.length && f.lightContrast < GRAPHIC_MIN_CONTRAST;

function decide(b: RuleBrand, p: Plan, facts: (svg: string) => PaintFacts | null): RuleResult {
  const out: RuleResult = { fallbacks: [] };
  const hues = palette(b, facts);
  const foreign = (art: Art) => foreignHues(facts(art.svg)?.hues ?? [], hues);
  let color = p.color;
  // `color` and `icon` are one mark: a colour artwork of another design than the icon (a
  // lockup with lettering, an older logo) gives way to the icon
  const icon = b.raw.icon;
  if (color && icon && !p.madeColor && color.svg !== icon.svg) {
    const a = facts(color.svg)?.shape;
    const i = facts(icon.svg)?.shape;
    const alike = a && i ? shapeOverlap(a, i) : 1;
    if (alike < SAME_MARK) {
      out.fallbacks.push(
        `color: ${color.source} is another design than the icon (overlap ${alike.toFixed(2)}); the icon (${icon.source}) is the colour mark`,
      );
      color = icon;
      out.color = icon;
    }
  }
  if (color && p.madeColor) {
    const bad = foreign(color);
    if (bad.length) {
      out.fallbacks.push(
        `color: brand colour #${b.brandColor} is a hue its artwork lacks (${bad.map((h) => h * 10)}°); no colour mark`,
      );
      color = undefined;
    } else out.color = color;
  }
  const colorFacts = color ? facts(color.svg) : null;
  for (const m of MODES) {
    const own = b.raw[m.variant];
    if (own) {
      out[m.variant] = { ...own, rule: "source" };
      continue;
    }
    const share = colorFacts?.[m.surface] ?? 0;
    // the plain mark: of the colour mark when that is one solid colour, else of the mono
    // mark when that is (recolouring a mark with white detail would fill the detail in: a
    // white disc for OAuth); only one that really reaches the floor, in no foreign hue
    const monoSolid = b.raw.mono ? facts(b.raw.mono.svg)?.solid : false;
    const plain = [
      colorFacts?.solid && color ? p.plainArt.get(color.svg)?.[m.variant] : undefined,
      monoSolid ? p.plain[m.variant] : undefined,
    ]
      .filter((c): c is Art => c !== undefined)
      .find((c) => !foreign(c).length && (facts(c.svg)?.[m.surface] ?? 0) >= MIN_VISIBLE_SHARE);
    if (color && share >= MIN_VISIBLE_SHARE) {
      const source = isRecolored(color) ? color.source : `artwork:${color.source}`;
      out[m.variant] = { svg: color.svg, source, rule: "colour" };
    } else if (plain) {
      out[m.variant] = { ...plain, rule: "plain" };
      if (color) {
        out.fallbacks.push(
          `${m.variant}: ${Math.round(share * 100)}% of the colour mark reaches 3:1; plain ${m.plain === "ffffff" ? "white" : "black"}`,
        );
      }
    } else if (color) {
      out[m.variant] = { svg: color.svg, source: `artwork:${color.source}`, rule: "below-floor" };
      out.belowFloor = [...(out.belowFloor ?? []), { variant: m.variant, share }];
      out.fallbacks.push(
        `${m.variant}: ${Math.round(share * 100)}% of the colour mark reaches 3:1 and there is no solid single-colour mark; colour artwork kept below the floor`,
      );
    }
  }
  // a near-white colour mark is the dark variant; `color` is the plain black mark
  if (color && !p.madeColor && colorFacts && nearWhite(colorFacts) && out.light?.rule === "plain") {
    const black = { svg: out.light.svg, source: out.light.source };
    out.fallbacks.push(
      `color: near-white colour mark (${Math.round(colorFacts.light * 100)}% reaches 3:1 on white) is the dark variant; color is plain black`,
    );
    out.color = black;
    if (icon?.svg === color.svg) out.icon = black;
  }
  return out;
}

export interface RulesReport {
  /** brands with a `color` made from the mono mark in the brand colour */
  madeColor: number;
  /** near-white colour marks: `color` is the plain black mark */
  nearWhite: number;
  /** brands whose colour artwork was another design than the icon: the icon is `color` */
  iconColor: number;
  /** dark/light variants by rule */
  rules: Record<"dark" | "light", Record<ModeRule, number>>;
  /** SVGs measured, of which rendered now (not in the cache) */
  measured: number;
  rendered: number;
  /** derived variants checked for foreign hues, and those that had one */
  checked: number;
  foreign: number;
  /** "slug: reason" per fallback */
  fallbacks: string[];
  /** every dark/light variant kept below the floor, with its exact share reaching 3:1 */
  belowFloor: { slug: string; variant: "dark" | "light"; share: number }[];
}

/**
 * The rules for every brand. `cacheFile` keeps paint facts by SVG hash (and `version`, which
 * must change with the measuring code), so a warm build renders only new artwork.
 */
export async function applyVariantRules(
  brands: RuleBrand[],
  cache: { file: string; version: string },
  /** the mono mark of a near-white colour mark, its white paint as ink (raw SVG), or null */
  darkMono?: (slug: string, svg: string) => string | null,
): Promise<{ results: Map<string, RuleResult>; report: RulesReport; cache: string }> {
  const plans = brands.map(plan);
  const stored: Record<string, PaintFacts | null> = existsSync(cache.file)
    ? (JSON.parse(readFileSync(cache.file, "utf8")) as Record<string, PaintFacts | null>)
    : {};
  const key = (svg: string) => `${cache.version}:${sha256(svg)}`;
  const wanted = new Map<string, string>();
  brands.forEach((b, i) => {
    for (const svg of measured(b, plans[i] as Plan)) wanted.set(key(svg), svg);
  });
  const missing = [...wanted].filter(([k]) => !(k in stored));
  const fresh = await paintFactsAll(missing.map(([, svg]) => withIdPrefix(svg, "m")));
  const next: Record<string, PaintFacts | null> = {};
  for (const k of wanted.keys()) next[k] = stored[k] ?? null;
  missing.forEach(([k], i) => {
    next[k] = fresh[i] ?? null;
  });
  const facts = (svg: string) => next[key(svg)] ?? null;
  // a source's mono mark drawn in white or a light grey (devicon's DataTables) is that shape in
  // black; brands without a mono mark whose colour mark is made for dark surfaces get one
  // flattened from it (its white paint is ink, not negative space); the new candidates are
  // measured too
  const newMono = new Set<string>();
  const more = new Map<string, string>();
  brands.forEach((b, i) => {
    const mono = b.raw.mono;
    const color = b.raw.color;
    const m = mono ? facts(mono.svg) : null;
    const c = color && !mono && darkMono ? facts(color.svg) : null;
    if (mono && m && !m.hues.length && darkSurfaceMark(m)) {
      const svg = m.solid ? recolor(mono.svg, "000000") : darkMono?.(b.slug, mono.svg);
      if (!svg) return;
      const how = m.solid ? "recolored" : "flattened";
      b.raw.mono = { svg, source: `${how}:${mono.source}` };
    } else if (color && c && darkSurfaceMark(c)) {
      const svg = darkMono?.(b.slug, color.svg);
      if (!svg) return;
      b.raw.mono = { svg, source: `flattened:${color.source}` };
    } else return;
    newMono.add(b.slug);
    plans[i] = plan(b);
    for (const s of measured(b, plans[i] as Plan)) if (!(key(s) in next)) more.set(key(s), s);
  });
  const moreFacts = await paintFactsAll([...more.values()].map((svg) => withIdPrefix(svg, "m")));
  [...more.keys()].forEach((k, i) => {
    next[k] = moreFacts[i] ?? null;
  });

  const report: RulesReport = {
    madeColor: 0,
    nearWhite: 0,
    iconColor: 0,
    rules: {
      dark: { source: 0, colour: 0, plain: 0, "below-floor": 0 },
      light: { source: 0, colour: 0, plain: 0, "below-floor": 0 },
    },
    measured: wanted.size + more.size,
    rendered: missing.length + more.size,
    checked: 0,
    foreign: 0,
    fallbacks: [],
    belowFloor: [],
  };
  const results = new Map<string, RuleResult>();
  brands.forEach((b, i) => {
    const r = decide(b, plans[i] as Plan, facts);
    if (newMono.has(b.slug)) r.mono = b.raw.mono;
    results.set(b.slug, r);
    if (r.color && plans[i]?.madeColor) report.madeColor++;
    else if (r.color?.source.startsWith("recolored:")) report.nearWhite++;
    else if (r.color) report.iconColor++;
    for (const m of MODES) {
      const v = r[m.variant];
      if (v) report.rules[m.variant][v.rule]++;
    }
    // the fidelity check on every derived variant's pixels
    const hues = palette(b, facts);
    for (const v of [r.color, r.dark, r.light]) {
      if (!v || ("rule" in v && v.rule === "source")) continue;
      report.checked++;
      const bad = foreignHues(facts(v.svg)?.hues ?? [], hues);
      if (bad.length) {
        report.foreign++;
        r.fallbacks.push(`foreign hue ${bad.map((h) => h * 10)}° in ${v.source}`);
      }
    }
    for (const why of r.fallbacks) report.fallbacks.push(`${b.slug}: ${why}`);
    for (const w of r.belowFloor ?? []) report.belowFloor.push({ slug: b.slug, ...w });
  });
  return { results, report, cache: JSON.stringify(next) };
}
