/**
 * Artwork review sheet: every variant of the chosen brands, as the PNG route serves it for a
 * pro key (default layout: optical size, 8% safe area), on white and on the dark surface
 * (#121212), with the brand's name and what was served under each pair.
 *
 *   npm run catalog:sheet -- --brands google,slack,stripe     these brands
 *   npm run catalog:sheet -- --source iconify:logos --sample 200   a sample of one source's brands
 *   npm run catalog:sheet -- --popular 50                     the most popular (scripts/catalog/popular.ts)
 *   options: --out FILE (default build/catalog-sheet.png), --tile PX (default 72)
 *
 * A red frame marks a dark or light tile on its own background where less than two thirds of
 * the painted area reaches 3:1 (the variant rules, docs/assets.md); a grey label with an
 * arrow says the brand lacks the variant and the route fell back ("wordmark → mono").
 * Tiles are composited by sharp; labels are an SVG rendered by resvg with the system fonts
 * (DejaVu Sans or Liberation Sans; `fc-list` shows what is installed).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Resvg } from "@resvg/resvg-js";
import sharp from "sharp";
import { renderRaster } from "../src/assets/render";
import { pickVariant } from "../src/assets/service";
import type { Brand, BuiltCatalog, StoredSvg, Variant } from "../src/catalog/built-catalog";
import { sha256 } from "./catalog/optimize";
import { DARK_SURFACE, MIN_VISIBLE_SHARE, paintFactsAll } from "./catalog/paint";
import { popularBrands } from "./catalog/popular";

const ROOT = resolve(import.meta.dir, "..");
const SHOWN: Variant[] = ["mono", "color", "dark", "light", "icon", "wordmark"];

const { values } = parseArgs({
  options: {
    brands: { type: "string" },
    source: { type: "string" },
    sample: { type: "string" },
    popular: { type: "string" },
    out: { type: "string", default: join(ROOT, "build", "catalog-sheet.png") },
    tile: { type: "string", default: "72" },
  },
});

const catalogFile = process.env.CATALOG_FILE ?? join(ROOT, "build", "catalog.json");
const catalog: BuiltCatalog = JSON.parse(readFileSync(catalogFile, "utf8"));
const bySlug = new Map(catalog.brands.map((b) => [b.slug, b]));

/** The brands the options ask for, in order. */
function chosen(): Brand[] {
  if (values.brands) {
    return values.brands.split(",").map((slug) => {
      const b = bySlug.get(slug.trim().toLowerCase());
      if (!b) throw new Error(`unknown slug: ${slug}`);
      return b;
    });
  }
  if (values.source) {
    const n = Number(values.sample ?? 50);
    // a deterministic sample: brands ordered by the hash of their slug
    return catalog.brands
      .filter((b) => Object.values(b.variants).some((v) => v?.source.includes(values.source ?? "")))
      .sort((a, b) => sha256(a.slug).localeCompare(sha256(b.slug)))
      .slice(0, n);
  }
  return popularBrands(ROOT, catalog.brands, Number(values.popular ?? 50));
}

/** A short name for where a variant's artwork came from. */
function origin(stored: StoredSvg): string {
  // the root's fill, else the one colour every painted element has (a recoloured colour mark)
  const fills = new Set([...stored.svg.matchAll(/\sfill="#([0-9a-f]{6})"/g)].map((m) => m[1]));
  const fill =
    /^<svg[^>]*\sfill="#([0-9a-f]{6})"/.exec(stored.svg)?.[1] ??
    (fills.size === 1 ? [...fills][0] : undefined);
  if (stored.source.startsWith("recolored:")) {
    if (fill === "ffffff") return "white";
    if (fill === "000000") return "black";
    return `#${fill ?? "?"}`;
  }
  if (stored.source.startsWith("artwork:")) return "colour mark";
  if (stored.source.startsWith("flattened:")) return "flattened";
  return stored.source.replace("iconify:", "");
}

const xmlText = (s: string) =>
  s.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c] ?? c);

async function main() {
  const brands = chosen();
  const tile = Number(values.tile);
  const pair = 2 * tile + 2;
  const gap = 10;
  const nameW = 130;
  const labelH = 15;
  const rowH = tile + labelH + 8;
  const headerH = 24;
  const width = nameW + SHOWN.length * (pair + gap) + gap;
  const height = headerH + brands.length * rowH + 8;
  const layers: { input: Buffer; left: number; top: number }[] = [];
  const text: string[] = [];
  const tiles: string[] = [];
  const label = (x: number, y: number, s: string, opts = "") =>
    text.push(`<text x="${x}" y="${y}" ${opts}>${xmlText(s)}</text>`);
  SHOWN.forEach((v, i) => {
    const x = nameW + i * (pair + gap);
    label(x + pair / 2, 16, v, 'text-anchor="middle" font-weight="bold" font-size="12"');
  });
  let flagged = 0;
  for (const [row, brand] of brands.entries()) {
    const y = headerH + row * rowH;
    label(6, y + tile / 2 + 4, brand.name.slice(0, 20), 'font-size="12" font-weight="bold"');
    label(6, y + tile / 2 + 18, brand.slug.slice(0, 22), 'font-size="10" fill="#666"');
    for (const [i, v] of SHOWN.entries()) {
      const x = nameW + i * (pair + gap);
      const served = pickVariant(brand.variants, v, "pro");
      const stored = served ? brand.variants[served] : undefined;
      const png = stored ? await renderRaster(stored.svg, tile, "png").catch(() => null) : null;
      for (const [k, bg] of [
        [0, "#ffffff"],
        [1, `#${DARK_SURFACE}`],
      ] as const) {
        const left = x + k * (tile + 2);
        tiles.push(`<rect x="${left}" y="${y}" width="${tile}" height="${tile}" fill="${bg}"/>`);
        if (png) layers.push({ input: Buffer.from(png), left, top: y });
      }
      // the variant's own background: flag it when under the floor
      const own = served === "dark" ? 1 : served === "light" ? 0 : -1;
      if (stored && own >= 0 && served === v) {
        // measured as the build measures it (scripts/catalog/paint.ts)
        const [facts] = await paintFactsAll([stored.svg]);
        const share = (own === 1 ? facts?.dark : facts?.light) ?? 0;
        if (share < MIN_VISIBLE_SHARE) {
          flagged++;
          const left = x + own * (tile + 2);
          text.push(
            `<rect x="${left + 1}" y="${y + 1}" width="${tile - 2}" height="${tile - 2}" fill="none" stroke="#e11" stroke-width="2"/>`,
          );
        }
      }
      const what = !served
        ? "placeholder"
        : served !== v
          ? `→ ${served}`
          : origin(stored as StoredSvg);
      label(
        x + pair / 2,
        y + tile + 12,
        what,
        `text-anchor="middle" font-size="10" fill="${served === v ? "#222" : "#999"}"`,
      );
    }
  }
  const svg = (body: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, Liberation Sans, sans-serif">${body}</svg>`;
  const font = { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" };
  const base = new Resvg(svg(`<rect width="100%" height="100%" fill="#e8e8e8"/>${tiles.join("")}`))
    .render()
    .asPng();
  const labels = new Resvg(svg(text.join("")), { font }).render().asPng();
  const out = resolve(values.out as string);
  mkdirSync(dirname(out), { recursive: true });
  await sharp(base)
    .composite([...layers, { input: labels, left: 0, top: 0 }])
    .png({ compressionLevel: 9 })
    .toFile(out);
  console.error(
    `[sheet] ${brands.length} brands, ${width}x${height} px, ${flagged} dark/light tiles under the floor: ${out}`,
  );
  if (!existsSync("/usr/share/fonts") && !existsSync("/System/Library/Fonts")) {
    console.error("[sheet] no system fonts found: labels are missing (install fonts-dejavu)");
  }
}

await main();
