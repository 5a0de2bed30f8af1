/**
 * Merging @web3icons/core (scripts/catalog/web3icons.ts) into the draft brands, so that no
 * two projects share a slug and no project gets two.
 *
 * 1. Entries of one project are one brand: a token, its network and its exchange or wallet
 *    with the same name (Ethereum the network and ETH, KuCoin the exchange, chain and KCS).
 * 2. web3icons gives no website, so a name alone cannot tell a crypto project from a company
 *    of the same name (the Gala token is not the Irish Gala stores, the Render token not
 *    render.com, the XAI chain not x.ai). A project whose name is the slug, name or title of
 *    a brand already in the catalog joins it only where fixtures/web3icons-merges.json says it
 *    is that brand (`same`, reviewed by hand); every other name hit is a namesake (`namesakes`
 *    lists the reviewed ones; an unreviewed hit is treated the same way and listed in the report).
 * 3. A project joining nothing becomes a new brand named by its display name, with the
 *    directory's slug rule (nsi.ts directorySlug). A slug another brand or a
 *    name-suggestion-index company already has gets the kind as a suffix (`gala-token`,
 *    `linea-network`, `rainbow-wallet`); a slug still taken leaves the project out.
 * 4. A token's ticker symbol becomes an alias (so search finds Bitcoin by "BTC") only where it
 *    is unambiguous: not a listed company's stock ticker (fixtures/listed-companies.json: stock
 *    tickers win), not the name, slug or alias of another brand or directory company, and at
 *    least two characters with a letter.
 * Artwork: a new brand takes the colour mark as `color` and `icon`, and the black mono mark;
 * a brand other sets draw takes the colour mark only where it has no colour artwork (the
 * others' marks stay as they are).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { squareFrame } from "../../src/assets/render";
import type { ArtworkSource, Brand, Variant } from "../../src/catalog/built-catalog";
import { analyzeColors } from "./artwork";
import type { DraftBrand, Web3Brand } from "./draft";
import { compactKey } from "./keys";
import { directorySlug } from "./nsi";
import { MIN_VISIBLE_SHARE, measureOptions, paintFactsOf } from "./paint";
import { type ListedCompany, loadListedCompanies } from "./tickers";
import type { ChosenArtwork } from "./variant-choice";
import {
  loadWeb3Icons,
  NO_MONO,
  WEB3_PACKAGE,
  WEB3_SOURCE,
  type Web3Icon,
  type Web3Kind,
  web3File,
  whiteOnly,
} from "./web3icons";

/** One project: its entries, the colour mark of the first (exchange, wallet, network, token). */
/** fixtures/web3icons-merges.json: name hits reviewed by hand, keyed by the compact name. */
export interface Web3Decisions {
  /** project key -> the catalog slug it is */
  same: Record<string, string>;
  /** project key -> why it is not the catalog brand of that name */
  namesakes: Record<string, string>;
}

export function loadWeb3Decisions(root: string): Web3Decisions {
  const data = JSON.parse(
    readFileSync(join(root, "fixtures", "web3icons-merges.json"), "utf8"),
  ) as Web3Decisions;
  return { same: data.same ?? {}, namesakes: data.namesakes ?? {} };
}

/** Folded stock tickers of the listed companies: "AAPL", and "7203" of "7203.T" and "TYO:7203". */
export function stockTickers(companies: Pick<ListedCompany, "tickers">[]): Set<string> {
  const out = new Set<string>();
  for (const c of companies) {
    for (const t of c.tickers) {
      const bare = t.slice(t.indexOf(":") + 1);
      out.add(compactKey(bare));
      out.add(compactKey(bare.replace(/\.[A-Z]+$/i, "")));
    }
  }
  return out;
}

/** "alpha wallet" -> "Alpha Wallet"; names with any capital stay as they are */
const cased = (name: string) =>
  name === name.toLowerCase()
    ? name.replace(/(^|[\s-])([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase())
    : name;

export interface Web3Merge {
  added: number;
  merged: number;
  namesakes: number;
  /** projects left out: their slug was taken even with the kind suffix */
  taken: number;
  /** entries of projects left out for want of a mono mark (NO_MONO) */
  noMono: number;
  symbolAliases: number;
  /** "web3icons x -> ..." lines for the build report */
  decisions: string[];
}

/** Entries of one name as one project, in load order. */
export function groupProjects(icons: Web3Icon[]): Map<string, Web3Brand> {
  const groups = new Map<string, Web3Brand>();
  for (const icon of icons) {
    const key = compactKey(icon.name);
    if (!key) continue;
    const g = groups.get(key);
    if (g) g.icons.push(icon);
    else groups.set(key, { name: cased(icon.name), icons: [icon] });
  }
  return groups;
}

/** The compact keys a draft answers to by name: slug, name, title keys. */
const ownKeys = (d: DraftBrand) =>
  new Set([compactKey(d.slug), compactKey(d.name), ...d.primaryKeys].filter(Boolean));

/**
 * Attach each project to a draft (`draft.web3`) or create a draft for it. `companySlugs` are
 * the name-suggestion-index companies' slugs (a new brand never takes one), `tickers` the
 * listed companies' stock tickers (stockTickers).
 */
export function mergeWeb3(
  drafts: DraftBrand[],
  icons: Web3Icon[],
  decisions: Web3Decisions,
  companySlugs: Set<string> = new Set(),
  tickers: Set<string> = new Set(),
): Web3Merge {
  const result: Web3Merge = {
    added: 0,
    merged: 0,
    namesakes: 0,
    taken: 0,
    noMono: 0,
    symbolAliases: 0,
    decisions: [],
  };
  const byKey = new Map<string, DraftBrand[]>();
  const index = (d: DraftBrand) => {
    for (const k of ownKeys(d)) byKey.set(k, [...(byKey.get(k) ?? []), d]);
  };
  for (const d of drafts) index(d);
  const bySlug = new Map(drafts.map((d) => [d.slug, d]));
  const projects = groupProjects(icons);
  const symbolOwners = new Map<string, DraftBrand[]>();

  for (const [key, project] of projects) {
    const first = project.icons[0] as Web3Icon;
    const label = `web3icons ${project.icons.map((i) => `${i.kind}:${i.file}`).join("+")}`;
    const hits = byKey.get(key) ?? [];
    const sameSlug = decisions.same[key];
    let brand: DraftBrand | undefined;
    if (sameSlug) {
      brand = bySlug.get(sameSlug);
      if (!brand) result.decisions.push(`${label} -> fixture names unknown slug ${sameSlug}`);
    }
    if (brand) {
      if (brand.web3) {
        result.decisions.push(
          `${label} -> left out: ${brand.slug} already has a web3icons project`,
        );
        continue;
      }
      brand.web3 = project;
      for (const i of project.icons) {
        brand.keys.add(compactKey(i.rawName));
        // a reviewed project's other name finds the brand too ("Near Protocol" for NEAR)
        const named = [brand.name, ...brand.aliases].map(compactKey);
        if (!named.includes(compactKey(i.name))) brand.aliases.push(i.name);
      }
      result.merged++;
      result.decisions.push(`${label} -> merged into ${brand.slug} (${brand.name}, reviewed)`);
    } else {
      // a brand of its own needs a single-colour mark for its dark and light variants, unless
      // its colour mark reads on both surfaces as it is
      if (!project.icons.some((i) => i.mono) && !readsOnBothSurfaces(mainIcon(project).svg)) {
        result.noMono += project.icons.length;
        result.decisions.push(`${label} -> left out: ${NO_MONO}`);
        continue;
      }
      const base = directorySlug(project.name);
      const takenBy = (slug: string) => bySlug.has(slug) || companySlugs.has(slug);
      let slug = base;
      if (hits.length || takenBy(slug)) slug = `${base}-${first.kind}`;
      if (!base || takenBy(slug)) {
        result.taken++;
        result.decisions.push(`${label} -> left out: slug ${slug} is taken`);
        continue;
      }
      if (hits.length) {
        result.namesakes++;
        const why = decisions.namesakes[key] ?? "not reviewed: kept apart by default";
        result.decisions.push(
          `${label} -> new brand ${slug}: namesake of ${hits.map((h) => h.slug).join(", ")} (${why})`,
        );
      } else {
        result.decisions.push(`${label} -> new brand ${slug}`);
      }
      const aliases = [...new Set(project.icons.flatMap((i) => [i.name, i.rawName]))].filter(
        (n) => n !== project.name,
      );
      brand = {
        key: slug,
        slug,
        name: project.name,
        aliases,
        hex: null,
        sourceUrl: null,
        guidelinesUrl: null,
        extraUrls: [],
        keys: new Set([compactKey(slug), key]),
        primaryKeys: new Set([compactKey(slug), key]),
        sources: new Set([WEB3_SOURCE]),
        siSvg: null,
        candidates: [],
        web3: project,
      };
      drafts.push(brand);
      bySlug.set(slug, brand);
      index(brand);
      result.added++;
    }
    for (const i of project.icons) {
      if (i.symbol) symbolOwners.set(i.symbol, [...(symbolOwners.get(i.symbol) ?? []), brand]);
    }
  }

  // ticker symbols as aliases, where they name one brand and no listed company
  for (const [symbol, owners] of symbolOwners) {
    const brand = owners[0] as DraftBrand;
    const k = compactKey(symbol);
    const others = (byKey.get(k) ?? []).filter((d) => d !== brand);
    const why =
      k.length < 2 || !/[a-z]/.test(k)
        ? "too short"
        : new Set(owners).size > 1
          ? "symbol of two projects"
          : tickers.has(k)
            ? "a listed company's stock ticker"
            : others.length
              ? `names ${others[0]?.slug}`
              : companySlugs.has(directorySlug(symbol))
                ? "names a directory company"
                : null;
    if (why) {
      result.decisions.push(`web3icons symbol ${symbol} of ${brand.slug}: not an alias (${why})`);
      continue;
    }
    if (compactKey(brand.name) === k || brand.aliases.includes(symbol)) continue;
    brand.aliases.push(symbol);
    brand.keys.add(k);
    result.symbolAliases++;
  }
  return result;
}

const art = (svg: string): ChosenArtwork => ({
  svg,
  source: WEB3_SOURCE,
  colors: analyzeColors(svg),
});

/**
 * Whether a colour mark reaches the variant rules' floor on both the dark and the light
 * surface as it is (MIN_VISIBLE_SHARE of its paint at 3:1, measured on pixels like the rules,
 * scripts/catalog/paint.ts): then its dark and light variants are the mark itself.
 */
export function readsOnBothSurfaces(svg: string): boolean {
  try {
    const img = new Resvg(squareFrame(svg) ?? svg, measureOptions()).render();
    const facts = paintFactsOf(img.pixels, img.width);
    return facts.dark >= MIN_VISIBLE_SHARE && facts.light >= MIN_VISIBLE_SHARE;
  } catch {
    return false;
  }
}

/** The entry whose marks the brand takes: the first (exchange, wallet, network, token) in colour. */
export const mainIcon = (project: Web3Brand): Web3Icon =>
  project.icons.find((i) => !whiteOnly(i.svg)) ?? (project.icons[0] as Web3Icon);

/**
 * The project's artwork in a draft's chosen variants (mutated): for a brand only web3icons
 * draws, the colour mark as `color` and `icon` and the black mono mark; for a brand other sets
 * draw, the colour mark only where it has no colour artwork. A colour mark painted in white
 * alone is made for dark surfaces (Arbitrum, Haven): it becomes the brand's own `dark`
 * artwork, never `color` (the variant rules make the colour mark from the mono mark). Records
 * web3icons among the draft's sources (after the other sets' variants were chosen, which read
 * the sources).
 */
export function addWeb3Artwork(
  draft: DraftBrand,
  out: Partial<Record<Variant, ChosenArtwork>>,
): void {
  const project = draft.web3;
  if (!project) return;
  const main = mainIcon(project);
  const only = draft.sources.size === 1 && draft.sources.has(WEB3_SOURCE);
  draft.sources.add(WEB3_SOURCE);
  if (whiteOnly(main.svg)) {
    if (only) out.dark ??= art(main.svg);
  } else if (only || !out.color) {
    const color = art(main.svg);
    out.color ??= color;
    out.icon ??= color;
  }
  const mono = main.mono ?? project.icons.find((i) => i.mono)?.mono;
  if (only && mono) out.mono ??= art(mono);
}

/** The published file a variant was read from. */
export const web3FileUrl = (
  version: string,
  kind: Web3Kind,
  variant: "branded" | "mono",
  file: string,
) =>
  `https://unpkg.com/${WEB3_PACKAGE}@${version}/dist/svgs/${web3File(kind, variant, file)}.svg.js`;

/**
 * The web3icons entry of a brand's artwork provenance (mutated) points at the exact upstream
 * file: the colour mark's, or the mono mark's where only that one is used.
 */
export function web3Provenance(
  artwork: ArtworkSource[] | undefined,
  project: Web3Brand | undefined,
  version: string,
): void {
  const entry = artwork?.find((a) => a.source === WEB3_SOURCE);
  if (!entry || !project) return;
  const main = mainIcon(project);
  const monoOnly = entry.variants.every((v) => v === "mono");
  entry.url = web3FileUrl(version, main.kind, monoOnly ? "mono" : "branded", main.file);
}

export interface Web3Import extends Web3Merge {
  /** entries in the packages */
  total: number;
  /** entries kept after the exclusions */
  kept: number;
  /** reason -> entries left out */
  excluded: Record<string, number>;
}

/** Loads the installed packages and the reviewed decisions and merges them into `drafts`. */
export function importWeb3(
  root: string,
  drafts: DraftBrand[],
  companySlugs: Set<string>,
): Web3Import {
  const { icons, excluded, total } = loadWeb3Icons(root);
  const merge = mergeWeb3(
    drafts,
    icons,
    loadWeb3Decisions(root),
    companySlugs,
    stockTickers(loadListedCompanies(root)),
  );
  if (merge.noMono) excluded[NO_MONO] = merge.noMono;
  return { ...merge, total, kept: icons.length - merge.noMono, excluded };
}

/** The build report's lines: what was kept, left out and merged. */
export function web3Summary(w: Web3Import): string[] {
  const out = Object.entries(w.excluded)
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${n} ${why}`)
    .join(", ");
  return [
    `${WEB3_PACKAGE}: ${w.total} entries, ${w.kept} kept; left out: ${out}`,
    `${WEB3_PACKAGE} merge: ${w.merged} projects merged into catalog brands (reviewed), ${w.added} new brands (${w.namesakes} of them namesakes of a catalog brand, with a suffixed slug), ${w.taken} left out on a taken slug; ${w.symbolAliases} ticker symbols as aliases`,
  ];
}

/** docs/attribution.md's section on @web3icons/core: brands per kind of upstream file. */
export function web3AttributionSection(brands: Pick<Brand, "artwork">[]): string[] {
  const kinds = new Map<string, number>();
  for (const b of brands) {
    const url = b.artwork?.find((a) => a.source === WEB3_SOURCE)?.url;
    const kind = url && /\/dist\/svgs\/([a-z]+)\//.exec(url)?.[1];
    if (kind) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  if (!kinds.size) return [];
  return [
    `## ${WEB3_PACKAGE}: the projects' own marks`,
    "",
    "The marks of crypto tokens, networks, wallets and exchanges, drawn by the projects and",
    `collected by [web3icons](https://github.com/0xa3k5/web3icons) (MIT, one licence for the`,
    "package). Each brand response's `artwork` entry for `web3icons` names the exact upstream",
    "file its artwork was read from (`dist/svgs/<kind>/<branded|mono>/<file>.svg.js`).",
    "",
    "| kind of file | brands |",
    "| --- | ---: |",
    ...[...kinds].sort().map(([k, n]) => `| ${k} | ${n} |`),
    "",
  ];
}
