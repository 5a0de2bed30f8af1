import type { StoredSvg, Variant } from "../built-catalog";
import { recolorMono } from "../enrichment/service";
import { type WebChannel, webSource } from "../provenance";
import { Refused } from "./address";
import type { Artwork } from "./artwork";
import { sha256 } from "./artwork";
import type { ArtworkPool } from "./artwork-pool";
import type { Candidate } from "./extract";
import { FetchError, type FetchResult, type GuardedFetcher, IMAGE_MAX_BYTES } from "./fetcher";
import type { DiscoveredAsset } from "./store/port";

/**
 * Which of a site's logo candidates becomes which variant: each fetched (at most
 * MAX_CANDIDATES, through the guarded fetcher) and read by the artwork worker, the best square
 * artwork the colour variant, a wide header logo the wordmark, a mask-icon or a single-colour
 * mark the mono mark (docs/discovery.md).
 */

export const IMAGE_ACCEPT = "image/svg+xml,image/png,image/webp,image/*;q=0.8";
/** Most logo candidates fetched per domain. */
const MAX_CANDIDATES = 8;
/** A raster this large (its shorter side) is not bettered by fetching more candidates. */
const BEST_RASTER_SIDE = 512;
/** Artwork wider than this (width / height) is a wordmark, not an icon. */
const SQUARE_RATIO = 1.5;
/** Where a wide logo is a wordmark (the header's logo); elsewhere wide artwork is no icon. */
const WORDMARK_ORIGINS = new Set([
  "img-logo",
  "img-logo-svg",
  "inline-svg",
  "json-ld",
  "json-ld-svg",
]);

/** What reading a site's artwork needs: the guarded fetcher, the artwork worker, the clock. */
export interface ArtworkReading {
  fetcher: GuardedFetcher;
  artworkPool: ArtworkPool;
  /** epoch ms */
  now: () => number;
}

/** One logo candidate of an attempt and what became of it. */
export interface TrailEntry {
  origin: string;
  /** the URL, or the page URL with #inline-svg */
  url: string;
  score: number;
  /** "color", "mono", "wordmark" when chosen, else why it lost */
  outcome: string;
}

/** A candidate fetched and read, with where it came from. */
export type Found = {
  artwork: Artwork;
  asset: Omit<DiscoveredAsset, "variant" | "provenance"> & { provenance: WebChannel };
};

/** The channel a URL was read over: plain http is marked as such. */
const channelOf = (url: string): WebChannel =>
  url.startsWith("http:") ? "website-http" : "website";

/** A response's validators, for a later conditional GET (absent when it sent none). */
export const validatorsOf = (r: FetchResult) => ({
  ...(r.etag ? { etag: r.etag } : {}),
  ...(r.lastModified ? { lastModified: r.lastModified } : {}),
});

/** How good an icon is: any vector beats any raster; a larger raster (up to 512 px) wins. */
function quality(f: Found): number {
  const { kind, source } = f.artwork;
  return kind === "svg"
    ? Number.POSITIVE_INFINITY
    : Math.min(source.width, source.height, BEST_RASTER_SIDE);
}

const aspectOf = (f: Found) => {
  const { width, height } = f.artwork.source;
  return Math.max(width, height) / Math.max(Math.min(width, height), 1);
};

const sizeText = (f: Found) =>
  f.artwork.kind === "svg"
    ? "a vector"
    : `a ${f.artwork.source.width}x${f.artwork.source.height} raster`;

/**
 * Candidates best first, at most MAX_CANDIDATES fetched: the best square artwork becomes the
 * colour variant (any vector, else the largest raster up to 512 px; a raster under 32 px
 * only when nothing larger works), a wide header logo the wordmark, a mask-icon or a
 * single-colour SVG the mono mark. The BIMI logo (a square tile with its background) becomes
 * the icon, and the colour artwork only when the site has none. `trail` gets every
 * candidate's outcome.
 */
export async function chooseArtwork(
  ctx: ArtworkReading,
  candidates: Candidate[],
  pageUrl: string,
  deadline: number,
  trail: TrailEntry[] = [],
  bimi: Found | null = null,
) {
  let color: Found | null = null;
  let mono: Found | null = null;
  let wordmark: Found | null = null;
  let reason: string | null = null;
  let tried = 0;
  const entries = new Map<Found, TrailEntry>();
  for (const c of candidates) {
    const entry: TrailEntry = {
      origin: c.origin,
      url: c.url ?? `${pageUrl}#inline-svg`,
      score: c.score,
      outcome: "",
    };
    trail.push(entry);
    const best = color ? quality(color) : 0;
    if (best >= BEST_RASTER_SIDE) {
      entry.outcome = `not fetched: ${sizeText(color as Found)} was found first`;
      continue;
    }
    if (c.origin === "mask-icon" && mono) {
      entry.outcome = "not fetched: a mono mark was found";
      continue;
    }
    if (color && c.declared && c.declared <= best) {
      entry.outcome = `not fetched: declared ${c.declared} px, not larger than ${sizeText(color)}`;
      continue;
    }
    if (tried >= MAX_CANDIDATES || Date.now() >= deadline) {
      entry.outcome = `not fetched: ${tried >= MAX_CANDIDATES ? `${MAX_CANDIDATES} candidates fetched` : "time budget spent"}`;
      continue;
    }
    tried++;
    let found: Found;
    try {
      found = await candidate(ctx, c, pageUrl, deadline);
    } catch (err) {
      if (err instanceof Refused) throw err;
      reason = `${c.origin}: ${(err as Error).message}`;
      entry.outcome = `failed: ${(err as Error).message}`;
      continue;
    }
    entries.set(found, entry);
    if (c.origin === "mask-icon") {
      mono = found;
      continue;
    }
    if (aspectOf(found) > SQUARE_RATIO) {
      if (!wordmark && WORDMARK_ORIGINS.has(c.origin)) wordmark = found;
      else entry.outcome = `lost: ${sizeText(found)}, not square`;
      continue;
    }
    if (color && quality(found) <= quality(color)) {
      entry.outcome = `lost: ${sizeText(found)}, not larger than ${sizeText(color)}`;
      continue;
    }
    if (color)
      (entries.get(color) as TrailEntry).outcome =
        `lost: ${sizeText(color)}, smaller than ${sizeText(found)}`;
    color = found;
  }
  if (bimi) entries.set(bimi, trail.find((e) => e.origin === "bimi") as TrailEntry);
  // no square artwork: the wordmark serves as the colour artwork, else the BIMI tile
  color ??= wordmark ?? bimi;
  if (!mono && color !== bimi && color?.artwork.single) mono = color;
  for (const [f, variant] of [
    [bimi, "icon"],
    [color, "color"],
    [mono, "mono"],
    [wordmark, "wordmark"],
  ] as const) {
    const e = f && entries.get(f);
    if (e)
      e.outcome = e.outcome.startsWith("chosen")
        ? `${e.outcome}, ${variant}`
        : `chosen: ${variant}`;
  }
  const variants: Partial<Record<Variant, StoredSvg>> = {};
  const assets: DiscoveredAsset[] = [];
  for (const [f, variant] of [
    [color, "color"],
    [wordmark, "wordmark"],
    [bimi, "icon"],
  ] as const) {
    if (!f) continue;
    variants[variant] = storedArt(f);
    assets.push({ ...f.asset, variant });
  }
  if (mono) {
    // the mark in black, as catalog mono marks are; dark and light are derived from it
    const black = recolorMono(mono.artwork.svg, "000000").svg;
    variants.mono = {
      svg: black,
      sha256: sha256(black),
      source: webSource(mono.asset.provenance),
    };
    assets.push({ ...mono.asset, variant: "mono" });
  } else if (variants.color && color !== bimi) {
    // multi-colour or raster artwork serves light and dark backgrounds as it is (not a BIMI
    // tile: a square with its own background is no mark for a page's background)
    variants.dark = variants.color;
    variants.light = variants.color;
  }
  return { color, mono, variants, assets, reason };
}

/** Found artwork as stored: its source tag says how it was obtained (catalog/provenance.ts). */
export function storedArt(f: Found): StoredSvg {
  const a = f.artwork;
  return {
    svg: a.svg,
    sha256: sha256(a.svg),
    source: webSource(f.asset.provenance, a.kind === "raster" ? a : undefined),
  };
}

async function candidate(
  ctx: ArtworkReading,
  c: Candidate,
  pageUrl: string,
  deadline: number,
): Promise<Found> {
  const fetchedAt = new Date(ctx.now()).toISOString();
  const prefix = `w${sha256(c.url ?? pageUrl).slice(0, 6)}`;
  if (c.svg !== undefined) {
    const artwork = await ctx.artworkPool.process({
      kind: "svg",
      text: c.svg,
      idPrefix: prefix,
      forceMono: false,
    });
    const url = `${pageUrl}#inline-svg`;
    return { artwork, asset: asset(c, url, fetchedAt, sha256(c.svg), artwork) };
  }
  const r = await image(ctx, c.url as string, pageUrl, deadline);
  if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
  const head = r.body.subarray(0, 512).toString("utf8").trimStart();
  const isSvg = r.contentType.includes("svg") || /^(?:<\?xml|<svg|<!--)/i.test(head);
  const artwork = await ctx.artworkPool.process(
    isSvg
      ? {
          kind: "svg",
          text: r.body.toString("utf8"),
          idPrefix: prefix,
          forceMono: c.origin === "mask-icon",
        }
      : { kind: "raster", bytes: new Uint8Array(r.body) },
  );
  if (c.origin === "og:image") {
    const { width, height } = artwork.source;
    const ratio = Math.max(width, height) / Math.min(width, height);
    if (ratio > 1.25 || Math.max(width, height) > 1024)
      throw new Error("og:image is not a small square");
  }
  return { artwork, asset: asset(c, r.url, fetchedAt, sha256(r.body), artwork, r) };
}

/**
 * An image by URL. A site whose home page was read over plain http (its https port refused
 * the connection) gets its https image URLs tried over http when their https port refuses
 * too; never after a TLS error, a reset or a timeout.
 */
async function image(ctx: ArtworkReading, url: string, pageUrl: string, deadline: number) {
  const opts = { maxBytes: IMAGE_MAX_BYTES, deadline, accept: IMAGE_ACCEPT };
  try {
    return await ctx.fetcher.get(url, opts);
  } catch (err) {
    const insecurePage = pageUrl.startsWith("http:") && url.startsWith("https:");
    if (!insecurePage || !(err instanceof FetchError) || err.code !== "port_closed") throw err;
    return ctx.fetcher.get(`http:${url.slice("https:".length)}`, opts);
  }
}

/** Where found artwork came from; its channel from the URL it was read over. */
export function asset(
  c: Candidate,
  sourceUrl: string,
  fetchedAt: string,
  hash: string,
  a: Artwork,
  response?: FetchResult,
): Found["asset"] {
  return {
    sourceUrl,
    fetchedAt,
    sha256: hash,
    kind: a.kind,
    width: a.source.width,
    height: a.source.height,
    score: c.score,
    origin: c.origin,
    provenance: channelOf(sourceUrl),
    ...(a.lowRes ? { lowRes: true } : {}),
    ...(response ? validatorsOf(response) : {}),
  };
}
