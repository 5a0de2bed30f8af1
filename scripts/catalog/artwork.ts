/** Colour facts about a piece of artwork (raw SVG markup), used to classify and colour brands. */
import { isNearGrey, normalizeHex, relativeLuminance, rgbToHex } from "../../src/catalog/colors";

const NAMED: Record<string, string> = {
  black: "000000",
  white: "ffffff",
  red: "ff0000",
  green: "008000",
  blue: "0000ff",
  yellow: "ffff00",
  orange: "ffa500",
  purple: "800080",
  gray: "808080",
  grey: "808080",
  silver: "c0c0c0",
  navy: "000080",
  teal: "008080",
  maroon: "800000",
  lime: "00ff00",
  aqua: "00ffff",
  cyan: "00ffff",
  fuchsia: "ff00ff",
  magenta: "ff00ff",
  olive: "808000",
};

const COLOR_USE =
  /(?:^|[\s;"'{])(?:fill|stroke|stop-color|flood-color|lighting-color|color)\s*(?:=\s*["']|:)\s*(#[0-9a-fA-F]{3,8}\b|rgba?\([^)]*\)|[a-zA-Z]+)/g;
const SHAPE_WITHOUT_FILL =
  /<(?:path|rect|circle|ellipse|polygon|polyline)\b(?![^>]*\bfill\s*=)(?![^>]*\bfill\s*:)[^>]*>/;

/** "#abc", "rgb(1,2,3)", "white" -> 6-hex; null for none/currentColor/url()/unknown. */
export function parseCssColor(value: string): string | null {
  const v = value.trim().toLowerCase();
  if (v.startsWith("#")) return normalizeHex(v);
  const rgb = /^rgba?\(\s*([\d.]+%?)[\s,]+([\d.]+%?)[\s,]+([\d.]+%?)/.exec(v);
  if (rgb) {
    const ch = (x = "0") => (x.endsWith("%") ? (Number.parseFloat(x) * 255) / 100 : Number(x));
    return rgbToHex([ch(rgb[1]), ch(rgb[2]), ch(rgb[3])]);
  }
  return NAMED[v] ?? null;
}

export interface ArtworkColors {
  /** one entry per colour use (fill, stroke, gradient stop ...), 6-hex */
  occurrences: string[];
  distinct: string[];
  /** some shape has no fill of its own and nothing sets one: it paints black */
  implicitBlack: boolean;
  /** any chromatic colour, or clearly different greys (black and white): full-colour artwork */
  multiColor: boolean;
}

export function analyzeColors(svg: string): ArtworkColors {
  const occurrences: string[] = [];
  for (const m of svg.matchAll(COLOR_USE)) {
    const hex = parseCssColor(m[1] ?? "");
    if (hex) occurrences.push(hex);
  }
  const groupFill = /<(?:g|svg|symbol|use)\b[^>]*\bfill\s*[=:]/.test(svg);
  const implicitBlack = !groupFill && SHAPE_WITHOUT_FILL.test(svg);
  const distinct = [...new Set(occurrences)];
  const all = implicitBlack ? [...new Set([...distinct, "000000"])] : distinct;
  // greys only count as different colours when they are visibly apart (black vs white)
  const greyBands = new Set(
    all.filter(isNearGrey).map((hex) => Math.min(2, Math.floor(relativeLuminance(hex) / 0.35))),
  );
  const multiColor = all.some((hex) => !isNearGrey(hex)) || greyBands.size >= 2;
  return { occurrences, distinct, implicitBlack, multiColor };
}
