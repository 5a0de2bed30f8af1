/**
 * @web3icons/core (MIT): the marks of crypto tokens, networks (blockchains), wallets and
 * exchanges, drawn by their projects and collected by web3icons.io. The metadata (names,
 * symbols, market-cap ranks) comes from its dependency @web3icons/common. Neither package's
 * code is run: the metadata modules' array literals and the string literal of each
 * `dist/svgs/<kind>/<variant>/<file>.svg.js` module are read as data (js-module.ts). Every SVG then
 * goes through the build's sanitizer and svgo like any other.
 *
 * Taken: the `branded` (colour) mark, and the `mono` mark (drawn white upstream, stored black
 * like every mono mark). The `background` variant (the mark on a coloured tile) is not used.
 *
 * Left out, and counted in the build report (see `exclusion`):
 * - wrapped, bridged and staked forms of another asset ("Wrapped Bitcoin", "Lido Staked SOL",
 *   "Coinbase Wrapped Staked ETH"), and tokens named after another token's symbol with a short
 *   prefix ("renBTC", "Huobi BTC", "sETH", "Origin Ether" OETH: see `derivativeOf`): a receipt
 *   for the same asset, drawn as that asset's mark, not a brand of its own (the brand is the
 *   asset or the protocol that issues it);
 * - tokens marked "(Old)": the superseded contract of a project whose current token is listed;
 * - testnets ("Goerli Testnet"): the network's own mark again;
 * - as a brand of its own (web3icons-merge.ts), a project without a single-colour (mono) mark,
 *   or with one painted in more than white (NO_MONO), whose colour mark does not read on both
 *   the dark and the light surface: most are a disc in one brand colour with the symbol
 *   knocked out in white, which reads on only one of them, and no plain white/black mark can
 *   stand in for it (a derived mono mark would fill the symbol in; see docs/catalog-build.md,
 *   readability). Joined to a catalog brand, which has a mono mark of its own, such a project
 *   still gives its colour mark;
 * - entries whose metadata names a file the package does not ship.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { moduleConstants } from "./js-module";
import { KEPT_LICENCES } from "./thesvg";

export const WEB3_PACKAGE = "@web3icons/core";
export const WEB3_META_PACKAGE = "@web3icons/common";
export const WEB3_SOURCE = "web3icons";

export type Web3Kind = "token" | "network" | "wallet" | "exchange";
export const WEB3_KINDS: Web3Kind[] = ["exchange", "wallet", "network", "token"];

/** One metadata entry of @web3icons/common (the fields the build reads). */
export interface Web3Meta {
  id: string;
  /** "token:BTC", "network:ethereum" */
  filePath: string;
  name: string;
  variants: string[];
  symbol?: string;
  marketCapRank?: number | null;
  shortName?: string;
}

export interface Web3Icon {
  kind: Web3Kind;
  /** the metadata id (CoinGecko's id for tokens) */
  id: string;
  /** the file name without extension: "BTC", "ethereum" */
  file: string;
  /** display name, a chain or version qualifier in parentheses dropped ("Degen (Base)" -> "Degen") */
  name: string;
  /** the metadata's name where it differs from `name` */
  rawName: string;
  /** ticker symbol in capitals (tokens) */
  symbol: string | null;
  rank: number | null;
  /** the branded (colour) mark */
  svg: string;
  /** the mono mark, recoloured black; null when the package has none usable (see NO_MONO) */
  mono: string | null;
}

const KIND_DIR: Record<Web3Kind, string> = {
  token: "tokens",
  network: "networks",
  wallet: "wallets",
  exchange: "exchanges",
};

/** The module path of an icon under the package's dist/svgs, without ".svg.js". */
export const web3File = (kind: Web3Kind, variant: "branded" | "mono", file: string) =>
  `${KIND_DIR[kind]}/${variant}/${file}`;

/** The array of a metadata module (`const tokens = [ { id: '1inch', ... } ]`), read as data. */
export function parseMetadataModule(text: string): Web3Meta[] {
  const data = [...moduleConstants(text).values()].find(Array.isArray);
  return (data as Web3Meta[] | undefined) ?? [];
}

/** The SVG string of a generated module (`var X =\n  '<svg ...>'`), or null. */
export function parseSvgModule(text: string): string | null {
  const literal = [...moduleConstants(text).values()].find((v) => typeof v === "string");
  const svg = typeof literal === "string" ? literal.trim() : "";
  if (!svg.startsWith("<svg") || !svg.endsWith("</svg>")) return null;
  // the class is the package's own hook for its components; the build's ids are its own
  return svg.replace(/^(<svg\b[^>]*?)\s+class="web3icons"/, "$1");
}

/** Painted in white alone (or nothing): a mono mark as web3icons ships it, or a mark made for dark surfaces. */
export function whiteOnly(svg: string): boolean {
  return [...svg.matchAll(/\s(?:fill|stroke|stop-color)="([^"]*)"/g)]
    .map((m) => (m[1] ?? "").toLowerCase())
    .every((p) => p === "none" || p === "#fff" || p === "#ffffff" || p === "white");
}

/**
 * The mono mark in black, as simple-icons ships mono marks (no fill attribute, so CSS `fill`
 * recolours it): web3icons draws its mono marks white (#fff) for its components to recolour,
 * under a root `fill="none"`. Null when the mark has any other paint or is shaded by opacity.
 */
export function blackMono(svg: string): string | null {
  if (!whiteOnly(svg)) return null;
  // shading by opacity is not a single-colour mark (the plain white/black marks need one)
  if (/\s(?:fill-|stroke-)?opacity="/.test(svg)) return null;
  return (
    svg
      .replace(/^(<svg\b[^>]*?)\s+fill="none"/, "$1")
      // a stroked shape without a fill of its own had the root's none: keep it unfilled
      .replace(
        /<(path|circle|rect|ellipse|polygon|polyline|line)\b(?![^>]*\sfill=)([^>]*\sstroke=)/g,
        '<$1 fill="none"$2',
      )
      .replace(/\s+fill="(?:#fff|#ffffff|white)"/gi, "")
      .replace(/(\sstroke=")(?:#fff|#ffffff|white)"/gi, '$1#000"')
  );
}

/** "Degen (Base)" -> "Degen", "Loom Network (NEW)" -> "Loom Network" */
export const displayName = (name: string) =>
  name
    .replace(/\s*\([^)]*\)\s*$/, "")
    .replace(/\s+/g, " ")
    .trim();

const DERIVATIVE = "wrapped, bridged or staked form of another asset";
export const NO_MONO = "no single-colour (mono) mark in the package (as a new brand)";

/** "Origin Ether" -> Origin, Ether */
const nameWords = (name: string) => name.split(/[^A-Za-z0-9]+/).filter(Boolean);

type TokenFacts = Pick<Web3Icon, "name" | "symbol" | "rank">;

/**
 * The token `icon` is a form of: a better-ranked token whose symbol (3+ characters) ends its
 * symbol after a prefix of 1-3 characters, where its name spells the prefix in lower case
 * before that symbol ("renBTC", "sETH", "Nucleon xCFX"), has the other's symbol as a word in capitals ("Huobi BTC",
 * "Rocket Pool ETH") or a word of 5+ letters the other's name starts with ("Swell Ethereum",
 * "Origin Ether"). Not: "Sushi" SUSHI, "Aleph Zero" AZERO, "BitMEX" BMEX, "MarsDAO" MDAO.
 */
export function derivativeOf(icon: TokenFacts, tokens: TokenFacts[]): TokenFacts | undefined {
  const s = icon.symbol;
  if (!s) return undefined;
  const words = nameWords(icon.name);
  return tokens.find((u) => {
    const base = u.symbol;
    if (!base || u === icon || base.length < 3 || !s.endsWith(base)) return false;
    const prefix = s.length - base.length;
    if (prefix < 1 || prefix > 3 || !/^[A-Z]+$/.test(s.slice(0, prefix))) return false;
    // the asset ranks above its forms (Bitcoin's own rank is missing upstream)
    if (u.rank !== null && (icon.rank === null || u.rank > icon.rank)) return false;
    const first = (nameWords(u.name)[0] ?? "").toLowerCase();
    return words.some(
      (w) =>
        w === s.slice(0, prefix).toLowerCase() + base ||
        w === base ||
        (w.length >= 5 && first.length >= 5 && first.startsWith(w.toLowerCase())),
    );
  });
}

/** Why an entry is left out, or null when it is kept. */
export function exclusion(
  kind: Web3Kind,
  meta: Pick<Web3Meta, "name" | "marketCapRank">,
): string | null {
  const name = meta.name.trim();
  if (!displayName(name)) return "no name";
  if (kind === "token" && /\((old)\)/i.test(name)) return "superseded token (Old)";
  if (/\b(wrapped|bridged|staked)\b/i.test(name))
    return "wrapped, bridged or staked form of another asset";
  if (kind === "network" && /\b(testnet|devnet)\b/i.test(name)) return "testnet";
  return null;
}

export interface Web3Load {
  icons: Web3Icon[];
  /** reason -> entries left out */
  excluded: Record<string, number>;
  total: number;
}

/**
 * The installed packages' licence, checked like thesvg's per-icon licences (KEPT_LICENCES):
 * the build stops rather than import artwork under a licence that changed.
 */
export function packageLicence(root: string, pkg: string): string {
  const { license } = JSON.parse(
    readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8"),
  ) as { license?: string };
  if (!license || !KEPT_LICENCES.has(license)) {
    throw new Error(
      `${pkg}: licence ${license ?? "(none)"} does not allow redistributing modified files`,
    );
  }
  return license;
}

/** Every kept entry of the installed packages: exchanges, wallets, networks, then tokens by rank. */
export function loadWeb3Icons(root: string): Web3Load {
  packageLicence(root, WEB3_PACKAGE);
  packageLicence(root, WEB3_META_PACKAGE);
  const meta = join(root, "node_modules", WEB3_META_PACKAGE, "dist", "metadata");
  const svgs = join(root, "node_modules", WEB3_PACKAGE, "dist", "svgs");
  const icons: Web3Icon[] = [];
  const excluded: Record<string, number> = {};
  const leaveOut = (why: string) => {
    excluded[why] = (excluded[why] ?? 0) + 1;
  };
  let total = 0;
  for (const kind of WEB3_KINDS) {
    const entries = parseMetadataModule(readFileSync(join(meta, `${KIND_DIR[kind]}.js`), "utf8"));
    const read = (variant: "branded" | "mono", file: string) => {
      const path = join(svgs, `${web3File(kind, variant, file)}.svg.js`);
      return existsSync(path) ? parseSvgModule(readFileSync(path, "utf8")) : null;
    };
    const seen = new Set<string>();
    const kept: Web3Icon[] = [];
    for (const m of entries) {
      total++;
      const why = exclusion(kind, m);
      if (why) {
        leaveOut(why);
        continue;
      }
      const file = m.filePath.slice(m.filePath.indexOf(":") + 1);
      const svg = m.variants.includes("branded") ? read("branded", file) : null;
      if (!svg) {
        leaveOut("no branded file in the package");
        continue;
      }
      // two entries on one file are one mark (a network's testnet, a renamed token)
      if (seen.has(file)) {
        leaveOut("second entry for the same file");
        continue;
      }
      seen.add(file);
      const monoSvg = m.variants.includes("mono") ? read("mono", file) : null;
      const mono = monoSvg ? blackMono(monoSvg) : null;
      const name = displayName(m.name);
      kept.push({
        kind,
        id: m.id,
        file,
        name,
        rawName: m.name.trim(),
        symbol: m.symbol ? m.symbol.toUpperCase() : null,
        rank: typeof m.marketCapRank === "number" ? m.marketCapRank : null,
        svg,
        mono,
      });
    }
    kept.sort((a, b) => (a.rank ?? 1e9) - (b.rank ?? 1e9) || a.file.localeCompare(b.file));
    for (const icon of kept) {
      if (kind === "token" && derivativeOf(icon, kept)) leaveOut(DERIVATIVE);
      else icons.push(icon);
    }
  }
  return { icons, excluded, total };
}
