/**
 * Artwork fidelity figures of the most popular brands (scripts/catalog/popular.ts), measured on
 * rendered pixels (resvg), printed as Markdown (recorded in docs/catalog-build.md):
 *  - `color`: the share whose colour variant is multi-colour or in the brand colour;
 *  - `dark`/`light`: the share that keep the brand's own hues (no foreign hue), how each was
 *    made, and their contrast on their surface (share of painted area at 3:1 or more);
 *  - the spread of visual weight across a 64 px logo wall (the PNG route's default layout
 *    against fit=contain&padding=0, the layout before safe areas).
 *
 *   npm run catalog:figures [-- --top 200]
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { alphaBounds, type Layout, renderRaster } from "../src/assets/render";
import { pickVariant } from "../src/assets/service";
import type { Brand, BuiltCatalog } from "../src/catalog/built-catalog";
import {
  foreignHues,
  hueBin,
  MIN_VISIBLE_SHARE,
  type PaintFacts,
  paintFactsAll,
} from "./catalog/paint";
import { popularBrands } from "./catalog/popular";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({ options: { top: { type: "string", default: "200" } } });
const catalogFile = process.env.CATALOG_FILE ?? join(ROOT, "build", "catalog.json");
const catalog: BuiltCatalog = JSON.parse(readFileSync(catalogFile, "utf8"));
const brands = popularBrands(ROOT, catalog.brands, Number(values.top));

const pct = (n: number, d: number) => `${d ? ((100 * n) / d).toFixed(1) : "-"}% (${n}/${d})`;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

/** Paint facts of every stored SVG of the brands, by SVG text. */
async function factsOf(list: Brand[]): Promise<Map<string, PaintFacts | null>> {
  const svgs = [...new Set(list.flatMap((b) => Object.values(b.variants).map((v) => v.svg)))];
  const facts = await paintFactsAll(svgs);
  return new Map(svgs.map((s, i) => [s, facts[i] ?? null]));
}

/** Hue bins of the brand's own artwork (source artwork, not recoloured), else its brand colour. */
function palette(b: Brand, facts: Map<string, PaintFacts | null>): number[] {
  const own = Object.values(b.variants).filter(
    (v) => !v.source.startsWith("recolored:") && !v.source.startsWith("artwork:"),
  );
  const hues = new Set(own.flatMap((v) => facts.get(v.svg)?.hues ?? []));
  const brandBin = b.brandColor ? hueBin(b.brandColor) : null;
  if (!hues.size && brandBin !== null) hues.add(brandBin);
  return [...hues];
}

/** Ink (alpha) share and painted-bounds share of a size x size PNG. */
async function weight(png: Uint8Array, size: number): Promise<{ ink: number; box: number }> {
  const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let ink = 0;
  for (let i = 3; i < data.length; i += 4) ink += (data[i] as number) / 255;
  const b = alphaBounds(data, size, size);
  return { ink: ink / (size * size), box: b ? (b.width * b.height) / (size * size) : 0 };
}

function spread(xs: number[]) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return {
    cv: sd / mean,
    ratio: quantile(xs, 0.9) / quantile(xs, 0.1),
    median: quantile(xs, 0.5),
  };
}

async function main() {
  const facts = await factsOf(brands);
  const lines: string[] = [];
  const print = (s: string) => lines.push(s);

  // color: multi-colour (two hues apart, or chromatic with black/white) or the brand colour
  let withColor = 0;
  let faithfulColor = 0;
  const offColor: string[] = [];
  for (const b of brands) {
    const color = b.variants.color;
    if (!color) continue;
    withColor++;
    const f = facts.get(color.svg);
    const hues = f?.hues ?? [];
    const multi = foreignHues(hues, hues.slice(0, 1)).length > 0;
    const brandBin = b.brandColor ? hueBin(b.brandColor) : null;
    const inBrandColour =
      brandBin === null ? hues.length === 0 : foreignHues([brandBin], hues).length === 0;
    if (multi || inBrandColour) faithfulColor++;
    else offColor.push(b.slug);
  }
  print(`| Measure (top ${brands.length} brands, rendered pixels) | Figure |`);
  print("|---|---|");
  print(`| has a \`color\` variant | ${pct(withColor, brands.length)} |`);
  print(
    `| \`color\` is multi-colour or in the brand colour | ${pct(faithfulColor, withColor)}${offColor.length ? `; not: ${offColor.join(", ")}` : ""} |`,
  );

  for (const [mode, surface] of [
    ["dark", "#121212"],
    ["light", "#ffffff"],
  ] as const) {
    let n = 0;
    let keep = 0;
    let colourMark = 0;
    let plain = 0;
    let source = 0;
    let below = 0;
    const shares: number[] = [];
    const contrasts: number[] = [];
    const foreign: string[] = [];
    const under: string[] = [];
    for (const b of brands) {
      const v = b.variants[mode];
      if (!v) continue;
      n++;
      const f = facts.get(v.svg);
      if (!f) continue;
      if (foreignHues(f.hues, palette(b, facts)).length === 0) keep++;
      else foreign.push(b.slug);
      if (v.source.startsWith("artwork:")) colourMark++;
      else if (v.source.startsWith("recolored:"))
        /^<svg[^>]*\sfill="#(ffffff|000000)"/.test(v.svg) ? plain++ : colourMark++;
      else source++;
      const share = f[mode];
      shares.push(share);
      contrasts.push(mode === "dark" ? f.darkContrast : f.lightContrast);
      if (share < MIN_VISIBLE_SHARE) {
        below++;
        under.push(`${b.slug} ${Math.round(share * 100)}%`);
      }
    }
    print(
      `| \`${mode}\` keeps the brand's own hues (no foreign hue) | ${pct(keep, n)}${foreign.length ? `; not: ${foreign.join(", ")}` : ""} |`,
    );
    print(
      `| \`${mode}\` made as: colour mark / plain ${mode === "dark" ? "white" : "black"} / source's own | ${colourMark} / ${plain} / ${source} |`,
    );
    print(
      `| \`${mode}\` on ${surface}: share of painted area at >= 3:1, min / p10 / median | ${(quantile(shares, 0) * 100).toFixed(0)}% / ${(quantile(shares, 0.1) * 100).toFixed(0)}% / ${(quantile(shares, 0.5) * 100).toFixed(0)}% |`,
    );
    print(
      `| \`${mode}\` on ${surface}: mean contrast of the painted area, p10 / median | ${quantile(contrasts, 0.1).toFixed(1)}:1 / ${quantile(contrasts, 0.5).toFixed(1)}:1 |`,
    );
    print(
      `| \`${mode}\` under the floor (< 2/3 of the area at 3:1) | ${pct(below, n)}${under.length ? `: ${under.join(", ")}` : ""} |`,
    );
  }

  // the logo wall: the colour mark as a pro key gets it (color, else mono, else the fallbacks)
  for (const [name, layout] of [
    ["default (fit=optical, padding=8)", { fit: "optical", padding: 8 }],
    ["fit=contain&padding=0 (edge to edge)", { fit: "contain", padding: 0 }],
  ] as [string, Layout][]) {
    const inks: number[] = [];
    const boxes: number[] = [];
    for (const b of brands) {
      const v = pickVariant(b.variants, "color", "pro");
      const svg = v ? b.variants[v]?.svg : undefined;
      if (!svg) continue;
      const w = await weight(await renderRaster(svg, 64, "png", layout), 64);
      inks.push(w.ink);
      boxes.push(w.box);
    }
    const ink = spread(inks);
    const box = spread(boxes);
    print(
      `| 64 px logo wall, ${name}: painted-bounds area, median / p90:p10 / CV | ${(box.median * 100).toFixed(0)}% / ${box.ratio.toFixed(2)} / ${box.cv.toFixed(2)} |`,
    );
    print(
      `| 64 px logo wall, ${name}: ink (alpha) coverage, median / p90:p10 / CV | ${(ink.median * 100).toFixed(0)}% / ${ink.ratio.toFixed(2)} / ${ink.cv.toFixed(2)} |`,
    );
  }
  console.log(lines.join("\n"));
}

await main();
