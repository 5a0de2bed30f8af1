/**
 * @thesvg/icons: brand marks with a website and a licence per icon. Only the constants of the
 * package's generated modules (`export const svg = \`<svg ...>\``) are read, as data
 * (js-module.ts), never its JS components; every SVG goes through the build's sanitizer and
 * svgo like any other.
 *
 * Kept: icons whose licence allows redistribution of modified files (KEPT_LICENCES). Left
 * out, and counted in the build report: no-derivatives, non-commercial, share-alike/copyleft,
 * trademark/"brand-use"/fair-use/custom/proprietary/"review required" and unknown licences;
 * the cloud-service product icons (azure-*, aws-*, gcp-*, k8s-*: service glyphs of one
 * company, not brands); the "-badge" icons (app tiles on opaque squares, like super-tiny-icons);
 * artwork painted by a stylesheet (the build's colour and paint analysis reads attributes).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { moduleConstants } from "./js-module";

export const THESVG_PACKAGE = "@thesvg/icons";
export const THESVG_SOURCE = "thesvg";

export interface TheSvgIcon {
  slug: string;
  title: string;
  /** 6 lowercase hex or null */
  hex: string | null;
  aliases: string[];
  licence: string;
  /** the brand's website, where given */
  url: string | null;
  /** the default (colour) artwork */
  svg: string;
  mono?: string;
  wordmark?: string;
}

/** Licences that allow redistributing modified files (attribution where the licence asks). */
export const KEPT_LICENCES = new Set([
  "CC0-1.0",
  "Unlicense",
  "MIT",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "Apache-2.0",
  "CC-BY-2.5",
  "CC-BY-3.0",
  "CC-BY-4.0",
]);

const PRODUCT_FAMILIES = ["azure-", "aws-", "gcp-", "k8s-"];

/** Why an icon is left out, or null when it is kept. */
export function exclusion(
  icon: Pick<TheSvgIcon, "slug" | "licence"> & { svg?: string },
): string | null {
  const l = icon.licence.trim();
  if (!KEPT_LICENCES.has(l)) {
    if (/-ND\b|\bND-/.test(l)) return "licence: no derivatives";
    if (/-NC\b|non-commercial/i.test(l)) return "licence: non-commercial";
    if (/-SA-|GPL|MPL/.test(l)) return "licence: share-alike or copyleft";
    if (/trademark|brand-use|fair use|custom|proprietary|review required|permission/i.test(l)) {
      return "licence: trademark, brand-use, fair use or custom terms";
    }
    return "licence: unknown";
  }
  if (PRODUCT_FAMILIES.some((p) => icon.slug.startsWith(p))) return "cloud-service product icon";
  if (/-badge(-|$)/.test(icon.slug)) return "app-tile badge";
  // colours set by class in a stylesheet: the build's paint analysis reads attributes
  if (icon.svg !== undefined && /<style/i.test(icon.svg)) return "stylesheet-painted artwork";
  return null;
}

/** The markup from `<svg` to `</svg>` (no XML declaration or comments before it), or null. */
function rawSvg(text: string | undefined): string | null {
  const start = text?.indexOf("<svg") ?? -1;
  const end = text?.lastIndexOf("</svg>") ?? -1;
  if (!text || start < 0 || end <= start) return null;
  return withViewBox(withoutClipPaint(text.slice(start, end + 6)));
}

/** Paint inside a clipPath never shows (only the shape clips); dropped so mono marks stay black. */
const withoutClipPaint = (svg: string) =>
  svg.replace(/<clipPath\b[\s\S]*?<\/clipPath>/g, (clip) =>
    clip.replace(/\s(fill|stroke)="[^"]*"/g, ""),
  );

/** The SVG with a viewBox (from width and height where it has none), or null without either. */
function withViewBox(svg: string): string | null {
  const root = /^<svg\b[^>]*>/.exec(svg)?.[0];
  if (!root) return null;
  if (/\sviewBox=/.test(root)) return svg;
  const w = /\swidth="([\d.]+)(px)?"/.exec(root)?.[1];
  const h = /\sheight="([\d.]+)(px)?"/.exec(root)?.[1];
  if (!w || !h) return null;
  return `<svg viewBox="0 0 ${w} ${h}"${svg.slice(4)}`;
}

/** One generated module's data, or null when it has no slug, title or SVG. */
export function parseTheSvgModule(text: string): TheSvgIcon | null {
  const c = moduleConstants(text);
  const str = (name: string) => {
    const v = c.get(name);
    return typeof v === "string" ? v : undefined;
  };
  const slug = str("slug");
  const title = str("title");
  const svg = rawSvg(str("svg"));
  if (slug === undefined || title === undefined || !svg) return null;
  const variants = new Map<string, string>();
  const listed = c.get("variants");
  if (listed && typeof listed === "object" && !Array.isArray(listed))
    for (const [name, markup] of Object.entries(listed)) {
      const svg = typeof markup === "string" ? rawSvg(markup) : null;
      if (svg) variants.set(name, svg);
    }
  const hex = str("hex");
  const url = str("url");
  const aliases = c.get("aliases");
  const licence = str("license");
  return {
    slug,
    title: title.trim(),
    hex: hex !== undefined && /^[0-9a-f]{6}$/i.test(hex) ? hex.toLowerCase() : null,
    aliases: Array.isArray(aliases) ? aliases.filter((a) => typeof a === "string") : [],
    licence: licence ?? "",
    url: url !== undefined && /^https?:\/\//.test(url) ? url : null,
    svg,
    ...(variants.has("mono") ? { mono: variants.get("mono") } : {}),
    ...(variants.has("wordmark") ? { wordmark: variants.get("wordmark") } : {}),
  };
}

export interface TheSvgLoad {
  icons: TheSvgIcon[];
  /** reason -> icons left out */
  excluded: Record<string, number>;
  total: number;
}

/** Every kept icon of the installed package, sorted by slug. */
export function loadTheSvg(root: string): TheSvgLoad {
  const dir = join(root, "node_modules", THESVG_PACKAGE, "dist");
  const icons: TheSvgIcon[] = [];
  const excluded: Record<string, number> = {};
  let total = 0;
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".js")) continue;
    const icon = parseTheSvgModule(readFileSync(join(dir, file), "utf8"));
    if (!icon) continue;
    total++;
    const why = exclusion(icon);
    if (why) excluded[why] = (excluded[why] ?? 0) + 1;
    else icons.push(icon);
  }
  return { icons, excluded, total };
}
