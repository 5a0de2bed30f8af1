/**
 * What a brand's home page says about its logo, name and colour (pure; parsed with
 * htmlparser2). Logo candidates are scored vector first (see CANDIDATE_SCORES and
 * docs/discovery.md); the caller fetches them best first and keeps the first that is usable.
 */
import { DomUtils, parseDocument } from "htmlparser2";
import { registrableDomain } from "../brand/domain";
import { isNearGrey, normalizeHex } from "../colors";

type Document = ReturnType<typeof parseDocument>;
type Element = Parameters<typeof DomUtils.getAttributeValue>[0];

export type CandidateOrigin =
  | "bimi"
  | "link-icon-svg"
  | "inline-svg"
  | "img-logo-svg"
  | "json-ld-svg"
  | "manifest-svg"
  | "mask-icon"
  | "img-logo"
  | "json-ld"
  | "manifest"
  | "apple-touch-icon"
  | "link-icon"
  | "apple-touch-icon-root"
  | "favicon.ico"
  | "og:image";

/** Base score per origin: vector sources first, then large raster icons, then the rest. */
export const CANDIDATE_SCORES: Record<CandidateOrigin, number> = {
  bimi: 110,
  "link-icon-svg": 100,
  "inline-svg": 96,
  "img-logo-svg": 94,
  "json-ld-svg": 92,
  "manifest-svg": 90,
  "mask-icon": 80,
  "img-logo": 60,
  "json-ld": 58,
  manifest: 56,
  "apple-touch-icon": 54,
  "link-icon": 40,
  "apple-touch-icon-root": 38,
  "favicon.ico": 20,
  "og:image": 10,
};

export interface Candidate {
  origin: CandidateOrigin;
  score: number;
  /** absolute URL to fetch, or null for inline markup */
  url: string | null;
  /** inline SVG markup (origin inline-svg) */
  svg?: string;
  /** declared size (sizes="192x192"), 0 when unknown */
  declared: number;
}

export interface PageFacts {
  /** the brand name, best source first, or null */
  name: string | null;
  /** where the name came from: "json-ld", "og:site_name", "application-name", "title" */
  nameSource: string | null;
  themeColor: string | null;
  manifestUrl: string | null;
  candidates: Candidate[];
  /** why the page names no brand (parked, empty, error or server default page), or null */
  noBrand: string | null;
}

/** A parked or for-sale domain page (the parking services' own words and scripts). */
const PARKED =
  /\b(?:this domain (?:name )?(?:is|may be) for sale|buy this domain|domain (?:is )?for sale|this domain is parked|parked (?:free|domain)|domain parking|related searches|sedoparking|parkingcrew|bodis\.com|afternic|hugedomains|dan\.com\/buy|undeveloped\.com|this web page is parked)\b/i;
/** Web server and hosting default pages, error pages. */
const DEFAULT_PAGE =
  /^(?:welcome to nginx!?|apache2? .*default page.*|it works!?|iis windows server|index of \/.*|403 forbidden|404 not found|not found|page not found|site not found|account suspended|default web site page|domain default page|coming soon|under construction|error|502 bad gateway|503 service unavailable)$/i;
/** Icons a CMS or site builder serves when the site set none. */
const GENERIC_ICON =
  /\/wp-includes\/images\/|\/wp-admin\/|s\.w\.org\/|wordpress\.com\/i\/(?:webclip|favicon)|\/wix\.com\/favicon|static\.wixstatic\.com\/.*\/favicon\.ico$|squarespace\.com\/universal\/default-favicon|website-files\.com\/img\/(?:favicon|webclip)|cdn\.shopify\.com\/shopifycloud\/.*default|\/blogger\.com\/favicon|\/ghost\/assets\/img\/|\/joomla_black|\/media\/system\/images\/joomla|\/misc\/favicon\.ico$|\/core\/misc\/favicon\.ico$/i;
/** Title parts that are no name. */
const GENERIC_TITLE =
  /^(?:home|homepage|home page|welcome|start|startseite|accueil|inicio|official site|official website|main page|index)$/i;

const ORGANIZATION =
  /(?:Organization|Corporation|Company|LocalBusiness|Brand|Store|Bank|Airline|University|CollegeOrUniversity|NewsMediaOrganization|OnlineStore|NGO)$/;

export function isGenericIcon(url: string): boolean {
  return GENERIC_ICON.test(url);
}

/** An attribute by name, any case (names keep their case so inline SVG keeps viewBox). */
function attr(el: Element, name: string): string {
  const attribs = (el as unknown as { attribs?: Record<string, string> }).attribs ?? {};
  const direct = attribs[name];
  if (direct !== undefined) return direct.trim();
  for (const [k, v] of Object.entries(attribs)) if (k.toLowerCase() === name) return v.trim();
  return "";
}
const words = (el: Element, name: string) => attr(el, name).toLowerCase().split(/\s+/);

function absolute(href: string, base: string): string | null {
  if (!href || href.startsWith("data:")) return null;
  try {
    const u = new URL(href, base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/** The URL relative links resolve against: the page's <base href> when it has one. */
function baseUrl(doc: Document, pageUrl: string): string {
  const base = elements(doc, (el) => el.name === "base" && attr(el, "href") !== "")[0];
  return (base && absolute(attr(base, "href"), pageUrl)) || pageUrl;
}

/**
 * Icons every site may serve at its root without linking them: /favicon.ico and the
 * apple-touch-icon files iOS asks for. Sizes are assumed (180 px, and 64 px for an ICO): a
 * candidate assumed no larger than the artwork in hand is not fetched.
 */
export function rootIcons(pageUrl: string): Candidate[] {
  const at = (path: string) => new URL(path, pageUrl).href;
  const touch = CANDIDATE_SCORES["apple-touch-icon-root"] + sizeBonus(180);
  return [
    {
      origin: "apple-touch-icon-root",
      score: touch,
      url: at("/apple-touch-icon.png"),
      declared: 180,
    },
    {
      origin: "apple-touch-icon-root",
      score: touch - 1,
      url: at("/apple-touch-icon-precomposed.png"),
      declared: 180,
    },
    {
      origin: "favicon.ico",
      score: CANDIDATE_SCORES["favicon.ico"],
      url: at("/favicon.ico"),
      declared: 64,
    },
  ];
}

/** Candidates best first, each URL (or inline markup) once, with its best score. */
export function rankCandidates(candidates: Candidate[]): Candidate[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const seen = new Set<string>();
  return sorted.filter((c) => {
    const key = c.url ?? `svg:${c.svg}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The largest side in a sizes attribute ("16x16 32x32" -> 32, "any" -> 0). */
function largestSize(sizes: string): number {
  let max = 0;
  for (const m of sizes.matchAll(/(\d+)x(\d+)/gi)) max = Math.max(max, Number(m[1]), Number(m[2]));
  return max;
}

/** A size bonus for rasters: up to +20 for 512 px and more. */
function sizeBonus(px: number): number {
  return Math.min(20, Math.round((Math.min(px, 512) / 512) * 20));
}

const isSvgUrl = (url: string, type = "") =>
  type.includes("svg") || /\.svgz?(?:$|[?#])/i.test(new URL(url).pathname);

function elements(doc: Document, test: (el: Element) => boolean): Element[] {
  return DomUtils.findAll(test, doc.children) as Element[];
}

/** "Tidewater Bank | Personal Banking" -> "Tidewater Bank"; the part naming the domain wins. */
export function cleanTitle(title: string, domain: string): string | null {
  const parts = title
    .replace(/\s+/g, " ")
    .split(/\s+[|\u2013\u2014:\u00b7\u2022\u00bb-]\s+|\s*[|\u00b7\u2022]\s*/)
    .map((p) => p.replace(/^welcome to\s+/i, "").trim())
    .filter((p) => p && !GENERIC_TITLE.test(p));
  if (!parts.length) return null;
  const label = (registrableDomain(domain) ?? domain).split(".")[0] ?? "";
  const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
  const named = parts.find((p) => squash(p) === label || squash(p).includes(label));
  const best = named ?? parts[0];
  return best && best.length <= 60 ? best : null;
}

/** Organization facts from the page's JSON-LD blocks (@graph and arrays included). */
function jsonLd(doc: Document): { name: string | null; logo: string | null } {
  const out = { name: null as string | null, logo: null as string | null };
  const visit = (node: unknown, depth: number) => {
    if (depth > 6 || !node || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n, depth + 1);
      return;
    }
    const o = node as Record<string, unknown>;
    const types = ([] as unknown[]).concat(o["@type"] ?? []).map(String);
    if (types.some((t) => ORGANIZATION.test(t))) {
      if (!out.name && typeof o.name === "string") out.name = o.name.trim();
      const logo = o.logo;
      const url =
        typeof logo === "string"
          ? logo
          : logo && typeof logo === "object"
            ? ((logo as Record<string, unknown>).url ??
              (logo as Record<string, unknown>).contentUrl)
            : null;
      if (!out.logo && typeof url === "string") out.logo = url;
    }
    for (const key of ["@graph", "publisher", "author", "brand", "parentOrganization"])
      if (key in o) visit(o[key], depth + 1);
  };
  for (const script of elements(
    doc,
    (el) => el.name === "script" && attr(el, "type").toLowerCase() === "application/ld+json",
  )) {
    try {
      visit(JSON.parse(DomUtils.textContent(script)), 0);
    } catch {}
  }
  return out;
}

/** Where an element sits: "logo"/"brand" said around it, in a header or nav, linked home. */
function placeOf(el: Element): { logoish: boolean; header: boolean; home: boolean } {
  let node: Element | null = el;
  const out = { logoish: false, header: false, home: false };
  for (let depth = 0; node && depth < 6; depth++) {
    const hint = `${attr(node, "class")} ${attr(node, "id")} ${attr(node, "aria-label")}`;
    if (/logo|brand/i.test(hint)) out.logoish = true;
    if (node.name === "a" && /^(?:\/|\.\/|https?:\/\/[^/]+\/?)$/.test(attr(node, "href")))
      out.home = true;
    if (node.name === "header" || node.name === "nav" || attr(node, "role") === "banner")
      out.header = true;
    node = node.parent as Element | null;
  }
  return out;
}

/** Inside a header or a link to the home page, with "logo" or "brand" around it. */
function isHeaderLogo(el: Element): boolean {
  const p = placeOf(el);
  return p.logoish && (p.home || p.header);
}

/** Names of pictures that are not the logo even when "logo" is in them. */
const NOT_LOGO =
  /hero|banner|slide|carousel|og[-_]?image|\bog[-_.]|social|share|cover|background|\bbg[-_.]|promo|poster|thumbnail/i;

/**
 * An <img> that is the site's logo: not named like a hero, banner or social image; not a
 * declared wide strip (over 8:1) or a page-sized picture; and either its own alt, class or id
 * says logo (WordPress custom-logo included), or it sits in the header, nav or home link with
 * "logo" in its file name or around it. A file name alone is not enough.
 */
function isLogoImg(el: Element): boolean {
  const src = attr(el, "src") || attr(el, "data-src");
  const file = src.split(/[?#]/)[0]?.split("/").pop() ?? "";
  const own = `${attr(el, "class")} ${attr(el, "id")} ${attr(el, "alt")}`;
  if (NOT_LOGO.test(`${file} ${own}`)) return false;
  const w = Number(attr(el, "width")) || 0;
  const h = Number(attr(el, "height")) || 0;
  if (w && h && (Math.max(w, h) / Math.min(w, h) > 8 || Math.min(w, h) > 600)) return false;
  if (/logo|brand/i.test(own)) return true;
  const p = placeOf(el);
  return (p.header || p.home) && (p.logoish || /logo/i.test(file));
}

export function extractPage(html: string, pageUrl: string, domain: string): PageFacts {
  const doc = parseDocument(html, { lowerCaseTags: true, lowerCaseAttributeNames: false });
  const candidates: Candidate[] = [];
  const add = (origin: CandidateOrigin, url: string | null, declared = 0, svg?: string) => {
    if (!url && !svg) return;
    if (url && isGenericIcon(url)) return;
    const raster = !origin.endsWith("-svg") && origin !== "inline-svg" && origin !== "mask-icon";
    const score = CANDIDATE_SCORES[origin] + (raster ? sizeBonus(declared) : 0);
    candidates.push({ origin, score, url, declared, ...(svg ? { svg } : {}) });
  };
  // links resolve against <base href> (the page URL when there is none)
  const base = baseUrl(doc, pageUrl);

  let manifestUrl: string | null = null;
  let themeColor: string | null = null;
  const names: [string, string][] = [];
  for (const link of elements(doc, (el) => el.name === "link")) {
    const rel = words(link, "rel");
    const url = absolute(attr(link, "href"), base);
    if (!url) continue;
    const type = attr(link, "type").toLowerCase();
    const size = largestSize(attr(link, "sizes"));
    if (rel.includes("manifest")) manifestUrl ??= url;
    else if (rel.includes("mask-icon")) add("mask-icon", url);
    else if (rel.includes("apple-touch-icon") || rel.includes("apple-touch-icon-precomposed"))
      add("apple-touch-icon", url, size || 180);
    else if (rel.includes("icon"))
      add(isSvgUrl(url, type) ? "link-icon-svg" : "link-icon", url, size);
  }
  for (const meta of elements(doc, (el) => el.name === "meta")) {
    const key = (attr(meta, "name") || attr(meta, "property")).toLowerCase();
    const content = attr(meta, "content");
    if (!content) continue;
    if (key === "theme-color" && !themeColor) themeColor = normalizeHex(content);
    else if (key === "og:site_name") names.push(["og:site_name", content]);
    else if (key === "application-name") names.push(["application-name", content]);
    else if (key === "og:image") add("og:image", absolute(content, base));
  }
  const ld = jsonLd(doc);
  if (ld.name) names.unshift(["json-ld", ld.name]);
  if (ld.logo) {
    const url = absolute(ld.logo, base);
    if (url) add(isSvgUrl(url) ? "json-ld-svg" : "json-ld", url);
  }
  for (const img of elements(doc, (el) => el.name === "img" && isLogoImg(el))) {
    const url = absolute(attr(img, "src") || attr(img, "data-src"), base);
    if (!url) continue;
    const declared = Math.max(Number(attr(img, "width")) || 0, Number(attr(img, "height")) || 0);
    add(isSvgUrl(url) ? "img-logo-svg" : "img-logo", url, declared);
  }
  for (const svg of elements(doc, (el) => el.name === "svg" && isHeaderLogo(el)).slice(0, 2)) {
    const markup = DomUtils.getOuterHTML(svg, { xmlMode: true });
    if (markup.length < 200_000) add("inline-svg", null, 0, markup);
  }
  const linked = candidates.length;

  const titleEl = elements(doc, (el) => el.name === "title")[0];
  const title = titleEl ? DomUtils.textContent(titleEl).trim() : "";
  const cleaned = title ? cleanTitle(title, domain) : null;
  if (cleaned) names.push(["title", cleaned]);
  const body = elements(doc, (el) => el.name === "body")[0];
  const text = (body ? DomUtils.textContent(body) : DomUtils.textContent(doc.children))
    .replace(/\s+/g, " ")
    .trim();

  let noBrand: string | null = null;
  if (PARKED.test(`${title} ${text.slice(0, 5000)}`) || /parking|sedo|bodis/i.test(scriptSrcs(doc)))
    noBrand = "parked or for-sale page";
  else if (DEFAULT_PAGE.test(title) || (!title && DEFAULT_PAGE.test(text.slice(0, 60))))
    noBrand = "server default or error page";
  else if (text.length < 20 && linked === 0 && !names.length) noBrand = "empty page";

  const [nameSource, name] = names.find(([, n]) => n.length >= 2 && n.length <= 80) ?? [null, null];
  return {
    name: name ? name.replace(/\s+/g, " ").trim() : null,
    nameSource,
    themeColor: themeColor && !isNearGrey(themeColor) ? themeColor : null,
    manifestUrl,
    candidates: rankCandidates([...candidates, ...rootIcons(pageUrl)]),
    noBrand,
  };
}

function scriptSrcs(doc: Document): string {
  return elements(doc, (el) => el.name === "script")
    .map((s) => attr(s, "src"))
    .join(" ");
}

/** Icons, name and theme colour from a web app manifest, merged into the page's facts. */
export function applyManifest(facts: PageFacts, manifest: unknown, manifestUrl: string): PageFacts {
  if (!manifest || typeof manifest !== "object") return facts;
  const m = manifest as Record<string, unknown>;
  const candidates = [...facts.candidates];
  const icons = Array.isArray(m.icons) ? m.icons.slice(0, 30) : [];
  for (const icon of icons as Record<string, unknown>[]) {
    if (typeof icon?.src !== "string") continue;
    const url = absolute(icon.src, manifestUrl);
    if (!url || isGenericIcon(url)) continue;
    if (String(icon.purpose ?? "").includes("monochrome")) continue;
    const declared = largestSize(String(icon.sizes ?? ""));
    const svg = isSvgUrl(url, String(icon.type ?? ""));
    const origin: CandidateOrigin = svg ? "manifest-svg" : "manifest";
    const score = CANDIDATE_SCORES[origin] + (svg ? 0 : sizeBonus(declared));
    candidates.push({ origin, score, url, declared });
  }
  const manifestName =
    typeof m.name === "string" ? m.name : typeof m.short_name === "string" ? m.short_name : null;
  const theme = typeof m.theme_color === "string" ? normalizeHex(m.theme_color) : null;
  const useName = manifestName && (!facts.name || facts.nameSource === "title");
  return {
    ...facts,
    candidates: rankCandidates(candidates),
    name: useName ? manifestName.trim() : facts.name,
    nameSource: useName ? "manifest" : facts.nameSource,
    themeColor: facts.themeColor ?? (theme && !isNearGrey(theme) ? theme : null),
  };
}
