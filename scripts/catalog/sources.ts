/**
 * The icon sets the build reads besides simple-icons, with their package, licence and how an
 * icon name splits into a brand base name and modifiers. Every stored SVG records its source
 * (`iconify:<set>` or `lobehub`); SOURCE_LICENCES names each source's package and licence for
 * the attribution list (build/ATTRIBUTION.md, see attribution.ts).
 *
 * Taken: simple-icons (CC0), @iconify-json/logos (CC0), devicon (MIT), skill-icons (MIT),
 * cib (CoreUI Brands, CC0), fa6-brands (Font Awesome 6 Brands, CC BY 4.0), streamline-logos
 * (CC BY 4.0; only its filled "solid"/"block" marks: the plain "logo" style is a line drawing,
 * not the brand's mark), bxl (Boxicons brands, MIT), @lobehub/icons-static-svg (AI companies,
 * MIT; colour, mono and text marks, with the brand's own title), tabler (MIT; only its
 * "brand-*" icons, and only as the last choice of mono mark: they are outline drawings, taken
 * for the brands no other set draws, such as Walmart, Disney, Mercedes-Benz, Pepsi).
 * Left (see docs/catalog-build.md): @iconify-json/simple-icons (the same data as simple-icons),
 * fa-brands / fa7-brands (the same marks as fa6-brands), cbi (Custom Brand Icons: CC BY-NC-SA,
 * non-commercial), arcticons (CC BY-SA line drawings of app icons, not the brands' marks),
 * token-branded / cryptocurrency-color (crypto tickers without names: "ACH", "AAG" ... as brands
 * would crowd search; web3icons' artwork is read with its names from @web3icons/core instead,
 * see web3icons.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type IconifySet, loadIconifySet } from "./iconify";

export type SetId =
  | "logos"
  | "devicon"
  | "skill-icons"
  | "cib"
  | "fa6-brands"
  | "streamline-logos"
  | "bxl"
  | "lobehub"
  | "tabler";

/** Order matters: earlier sets create a brand first (and name it). */
export const ICONIFY_SETS: SetId[] = [
  "logos",
  "devicon",
  "skill-icons",
  "lobehub",
  "cib",
  "fa6-brands",
  "bxl",
  "streamline-logos",
  "tabler",
];

export interface SourceLicence {
  package: string;
  licence: string;
  url: string;
  author: string;
  /** the licence asks for credit */
  attribution: boolean;
}

/** The licence of a source whose icons each carry their own (thesvg). */
export const PER_ICON = "per icon";

export const SOURCE_LICENCES: Record<string, SourceLicence> = {
  "simple-icons": {
    package: "simple-icons",
    licence: "CC0-1.0",
    url: "https://github.com/simple-icons/simple-icons",
    author: "Simple Icons contributors",
    attribution: false,
  },
  "iconify:logos": {
    package: "@iconify-json/logos",
    licence: "CC0-1.0",
    url: "https://github.com/gilbarbara/logos",
    author: "Gil Barbara",
    attribution: false,
  },
  "iconify:devicon": {
    package: "@iconify-json/devicon",
    licence: "MIT",
    url: "https://github.com/devicons/devicon",
    author: "konpa",
    attribution: true,
  },
  "iconify:skill-icons": {
    package: "@iconify-json/skill-icons",
    licence: "MIT",
    url: "https://github.com/tandpfun/skill-icons",
    author: "tandpfun",
    attribution: true,
  },
  "iconify:cib": {
    package: "@iconify-json/cib",
    licence: "CC0-1.0",
    url: "https://github.com/coreui/coreui-icons",
    author: "creativeLabs Łukasz Holeczek",
    attribution: false,
  },
  "iconify:fa6-brands": {
    package: "@iconify-json/fa6-brands",
    licence: "CC-BY-4.0",
    url: "https://github.com/FortAwesome/Font-Awesome",
    author: "Dave Gandy",
    attribution: true,
  },
  "iconify:streamline-logos": {
    package: "@iconify-json/streamline-logos",
    licence: "CC-BY-4.0",
    url: "https://github.com/webalys-hq/streamline-vectors",
    author: "Streamline",
    attribution: true,
  },
  "iconify:bxl": {
    package: "@iconify-json/bxl",
    licence: "MIT",
    url: "https://github.com/box-icons/boxicons-core",
    author: "Boxicons",
    attribution: true,
  },
  "iconify:tabler": {
    package: "@iconify-json/tabler",
    licence: "MIT",
    url: "https://github.com/tabler/tabler-icons",
    author: "Paweł Kuna",
    attribution: true,
  },
  thesvg: {
    package: "@thesvg/icons",
    licence: PER_ICON,
    url: "https://github.com/glincker/thesvg",
    author: "thesvg.org contributors",
    attribution: true,
  },
  web3icons: {
    package: "@web3icons/core",
    licence: "MIT",
    url: "https://github.com/0xa3k5/web3icons",
    author: "0xa3k5 and the web3icons contributors",
    attribution: true,
  },
  lobehub: {
    package: "@lobehub/icons-static-svg",
    licence: "MIT",
    url: "https://github.com/lobehub/lobe-icons",
    author: "LobeHub",
    attribution: true,
  },
};

/** Trailing name parts that are modifiers, per set. */
export const MODIFIERS: Record<SetId, string[]> = {
  logos: [
    "icon",
    "dark",
    "mono",
    "monochrome",
    "alt",
    "round",
    "clean",
    "2020",
    "classic",
    "old",
    "vertical",
    "color",
  ],
  devicon: ["wordmark"],
  "skill-icons": ["dark", "light"],
  cib: ["alt"],
  "fa6-brands": ["alt"],
  bxl: [],
  // "x-logo-1-solid": solid/block/line style, an alternate number or drawing, the word "logo"
  "streamline-logos": ["solid", "block", "1", "2", "3", "4", "alternate", "logo"],
  lobehub: ["color", "text", "brand", "cn"],
  tabler: ["filled"],
};

/** Leading name parts that are modifiers ("square-github" in fa6-brands). */
const PREFIX_MODIFIERS: Partial<Record<SetId, string[]>> = {
  "fa6-brands": ["square"],
  cib: ["square"],
  tabler: ["brand"],
};

/** "whatsapp-monochrome-icon" -> { base: "whatsapp", mods: {monochrome, icon} } */
export function parseIconName(set: SetId, name: string): { base: string; mods: Set<string> } {
  const parts = name.split("-");
  const mods = new Set<string>();
  while (parts.length > 1 && MODIFIERS[set].includes(parts[parts.length - 1] ?? "")) {
    mods.add(parts.pop() as string);
  }
  const prefixes = PREFIX_MODIFIERS[set] ?? [];
  while (parts.length > 1 && prefixes.includes(parts[0] ?? "")) mods.add(parts.shift() as string);
  return { base: parts.join("-"), mods };
}

/** Display names a set gives its icons (lobehub's <title>), by icon name. */
export type Titles = Map<string, string>;

const ROOT_PAINT = /\s(fill|fill-rule|clip-rule|stroke|stroke-width)="([^"]*)"/g;

/**
 * The lobehub SVG files as an iconify set: body = the markup inside <svg> without its title,
 * the root's paint attributes kept on a wrapping <g>; titles from <title>.
 */
export function loadLobehub(root: string): { set: IconifySet; titles: Titles } {
  const dir = join(root, "node_modules", "@lobehub", "icons-static-svg", "icons");
  const set: IconifySet = { prefix: "lobehub", icons: {} };
  const titles: Titles = new Map();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".svg")) continue;
    const text = readFileSync(join(dir, file), "utf8");
    const m = /^<svg([^>]*)>([\s\S]*)<\/svg>\s*$/.exec(text.trim());
    const vb = m?.[1] ? /viewBox="([^"]+)"/.exec(m[1]) : null;
    if (!m || !vb?.[1]) continue;
    const [left, top, width, height] = vb[1].split(/[\s,]+/).map(Number);
    let body = m[2] ?? "";
    const title = /<title>([^<]*)<\/title>/.exec(body)?.[1];
    body = body.replace(/<title>[^<]*<\/title>/, "");
    const paint = [...(m[1] ?? "").matchAll(ROOT_PAINT)].map((a) => `${a[1]}="${a[2]}"`);
    if (paint.length) body = `<g ${paint.join(" ")}>${body}</g>`;
    const name = file.slice(0, -4);
    set.icons[name] = { body, left, top, width, height };
    if (title) titles.set(name, title.trim());
  }
  return { set, titles };
}

export function loadSet(root: string, id: SetId): { set: IconifySet; titles: Titles } {
  if (id === "lobehub") return loadLobehub(root);
  return { set: loadIconifySet(root, `@iconify-json/${id}`), titles: new Map() };
}

/** The source label stored on SVGs of a set. */
export const sourceOf = (id: SetId) => (id === "lobehub" ? "lobehub" : `iconify:${id}`);
