/**
 * Brand domains, derived at build time from each brand's official URLs (simple-icons source,
 * guidelines and "dup" sources), plus curated overrides.
 *
 * Per URL: the registrable domain (tldts, ICANN suffixes) is claimed, unless it is a hosting,
 * social or aggregator site, which only the brand named by the domain may claim (github.com
 * for GitHub). Brand-portal and help-desk hosts (frontify.com, notion.site ...) give no
 * domain to anyone else, not even their customer's subdomain. Project sites on user-content hosts (x.github.io, x.netlify.app ...) claim that
 * host. A subdomain host is kept as well when it names the brand (kafka.apache.org for
 * Apache Kafka, fonts.google.com for Google Fonts). web.archive.org links are unwrapped.
 *
 * A domain claimed by several brands goes to, in order: the override, the brand the domain's
 * label (or host) names, a simple-icons brand over an iconify-only one, a brand's source URL
 * over its other URLs, the lowest id. A plain derived domain claimed by three or more brands
 * that it does not name is a shared parent-company site and is given to nobody.
 */
import { getDomain, parse } from "tldts";
import { compactKey } from "./keys";

/** Registrable domains that host other brands' material; only their own brand may claim them. */
export const AGGREGATORS = new Set([
  "github.com",
  "githubusercontent.com",
  "github.io",
  "github.blog",
  "gitlab.com",
  "gitlab.io",
  "bitbucket.org",
  "sourceforge.net",
  "sourceforge.io",
  "codeberg.org",
  "gitee.com",
  "wikipedia.org",
  "wikimedia.org",
  "wikidata.org",
  "fandom.com",
  "figma.com",
  "behance.net",
  "dribbble.com",
  "twitter.com",
  "x.com",
  "t.co",
  "facebook.com",
  "fb.com",
  "instagram.com",
  "youtube.com",
  "youtu.be",
  "medium.com",
  "linkedin.com",
  "reddit.com",
  "google.com",
  "goo.gl",
  "googleusercontent.com",
  "googleapis.com",
  "gstatic.com",
  "withgoogle.com",
  "apple.com",
  "microsoft.com",
  "live.com",
  "npmjs.com",
  "npmjs.org",
  "unpkg.com",
  "jsdelivr.net",
  "cdnjs.com",
  "codepen.io",
  "codesandbox.io",
  "stackblitz.com",
  "jsfiddle.net",
  "archive.org",
  "imgur.com",
  "flickr.com",
  "pinterest.com",
  "brandfolder.com",
  "frontify.com",
  "brandfetch.com",
  "brandfetch.io",
  "bynder.com",
  "canva.com",
  "worldvectorlogo.com",
  "seeklogo.com",
  "svgrepo.com",
  "iconscout.com",
  "freepik.com",
  "vecteezy.com",
  "wikiwand.com",
  "dropbox.com",
  "box.com",
  "notion.so",
  "notion.site",
  "readthedocs.io",
  "readthedocs.org",
  "gitbook.io",
  "gitbook.com",
  "discord.com",
  "discord.gg",
  "t.me",
  "vimeo.com",
  "twitch.tv",
  "tiktok.com",
  "amazonaws.com",
  "cloudfront.net",
  "windows.net",
  "azureedge.net",
  "shields.io",
  "producthunt.com",
  "crunchbase.com",
  "trello.com",
  "slideshare.net",
  "scribd.com",
  "issuu.com",
  "steampowered.com",
  "steamcommunity.com",
  "apkpure.com",
  "bit.ly",
  "linktr.ee",
  "tinyurl.com",
  "wix.com",
  "squarespace.com",
  "typeform.com",
  "ctfassets.net",
  "contentful.com",
  "cloudinary.com",
  "imgix.net",
  "zendesk.com",
  "hubspot.com",
  "hubspotusercontent.com",
  "mailchimp.com",
  "creativecommons.org",
  "opencollective.com",
  "patreon.com",
  "itch.io",
  "lottiefiles.com",
  "envato.com",
  "99designs.com",
  "fiverr.com",
  "upwork.com",
  "vk.com",
  "weibo.com",
  "qq.com",
  "widencollective.com",
  "brandpad.io",
  "vtlogo.com",
  "cryptologos.cc",
  "brandlogos.net",
  "custhelp.com",
  "mediaroom.com",
  "primer.style",
  "facebookbrand.com",
  "helpshift.com",
  "invisionapp.com",
  "visualbook.pro",
  "googlesource.com",
  "dpdhl-brands.com",
  "lingoapp.com",
  "zeroheight.com",
]);

/**
 * Brand-portal, press-room and help-desk hosts whose subdomains are customer spaces
 * (algolia.frontify.com, acme.notion.site): a brand's guidelines living there give it no
 * domain at all; only the host's own brand may claim the registrable domain.
 */
export const TENANT_HOSTS = new Set([
  "frontify.com",
  "notion.site",
  "brandfolder.com",
  "bynder.com",
  "widencollective.com",
  "brandpad.io",
  "lingoapp.com",
  "zeroheight.com",
  "mediaroom.com",
  "zendesk.com",
  "custhelp.com",
  "helpshift.com",
]);

/** Hosting suffixes where the label in front is someone's own site (x.github.io). */
const USER_SITE_SUFFIXES = new Set([
  "js.org",
  "github.io",
  "gitlab.io",
  "netlify.app",
  "vercel.app",
  "pages.dev",
  "web.app",
  "firebaseapp.com",
  "herokuapp.com",
  "readthedocs.io",
  "gitbook.io",
  "surge.sh",
  "codeberg.page",
  "blogspot.com",
  "wordpress.com",
  "sourceforge.io",
  "glitch.me",
  "webflow.io",
]);

export interface DomainBrand {
  id: number;
  slug: string;
  /** compact keys naming the brand (slug, title, aliases) */
  keys: Set<string>;
  fromSimpleIcons: boolean;
  sourceUrl: string | null;
  otherUrls: string[];
}

/** brand slug -> domains to add; "!domain" removes a derived domain, "!*" all derived ones. */
export type DomainOverrides = Record<string, string[]>;

const LEVELS = [
  "",
  "derived from the brand's URLs",
  "domain names the brand with an affix",
  "domain names the brand",
  "override",
];

interface Claim {
  brand: DomainBrand;
  /** 4 override, 3 the domain names the brand, 2 names it with an affix, 1 derived from its URLs */
  strength: number;
  fromSource: boolean;
}

export interface DomainReport {
  brandsWithDomain: number;
  domains: number;
  contested: { domain: string; claimants: string[]; winner: string | null; rule: string }[];
  unknownOverrideSlugs: string[];
}

export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^www\d?\./, "");
}

function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (u.hostname === "web.archive.org") {
      const inner = /\/web\/[^/]+\/(https?:\/\/.+)$/.exec(u.pathname + u.search);
      return inner?.[1] ? hostOf(inner[1]) : null;
    }
    return normalizeHost(u.hostname);
  } catch {
    return null;
  }
}

const LABEL_PREFIXES = ["get", "use", "try", "join", "go", "my", "the"];
const LABEL_SUFFIXES = [
  "app",
  "hq",
  "io",
  "js",
  "lang",
  "software",
  "project",
  "foundation",
  "group",
  "inc",
  "corp",
  "labs",
  "official",
  "team",
  "dev",
  "db",
  "global",
  "online",
];

/**
 * How a domain label names the brand: 3 exactly (stripe for Stripe), 2 with a common affix
 * (getpostman, valvesoftware, fedoraproject, khronos for Khronos Group), 0 not at all.
 */
export function labelNames(brand: DomainBrand, rawLabel: string): number {
  const label = compactKey(rawLabel);
  if (brand.keys.has(label)) return 3;
  for (const key of brand.keys) {
    if (key.length < 3) continue;
    for (const pre of ["", ...LABEL_PREFIXES]) {
      for (const suf of ["", ...LABEL_SUFFIXES]) {
        if (!pre && !suf) continue;
        if (label === pre + key + suf || key === pre + label + suf) return 2;
      }
    }
  }
  return 0;
}

/** Does the host's subdomain name the brand? ("fonts" + "google" -> googlefonts) */
function subdomainNames(brand: DomainBrand, sub: string, label: string): number {
  const labels = sub.split(".").filter((l) => l && l !== "www");
  if (!labels[0]) return 0;
  const first = compactKey(labels[0]);
  const all = compactKey(labels.join(""));
  const lab = compactKey(label);
  return Math.max(
    ...[first, all, first + lab, lab + first, all + lab, lab + all].map((k) =>
      labelNames(brand, k),
    ),
  );
}

/**
 * Domains a brand claims from one URL, with claim strength (3 the domain names the brand,
 * 2 names it with an affix, 1 only derived from the brand's URL).
 */
export function claimsFromUrl(
  brand: DomainBrand,
  url: string,
): { domain: string; strength: number }[] {
  const host = hostOf(url);
  if (!host) return [];
  const info = parse(host, { allowPrivateDomains: true });
  const icann = getDomain(host);
  if (info.isIp || !icann || !info.domain) return [];
  if (info.domain !== icann && info.publicSuffix && USER_SITE_SUFFIXES.has(info.publicSuffix)) {
    // x.github.io is the site of "x": only the brand called x may claim it
    const strength = labelNames(brand, info.domainWithoutSuffix ?? "");
    return strength ? [{ domain: info.domain, strength }] : [];
  }
  const label = icann.slice(0, icann.indexOf("."));
  const named = labelNames(brand, label);
  if (TENANT_HOSTS.has(icann)) return named === 3 ? [{ domain: icann, strength: 3 }] : [];
  const out: { domain: string; strength: number }[] = [];
  let hostNamed = 0;
  if (host !== icann && host.endsWith(`.${icann}`)) {
    hostNamed = subdomainNames(brand, host.slice(0, -icann.length - 1), label);
    if (hostNamed) out.push({ domain: host, strength: hostNamed });
  }
  if (named === 3) out.push({ domain: icann, strength: 3 });
  else if (AGGREGATORS.has(icann)) return out;
  // kafka.apache.org names Apache Kafka; apache.org itself is the parent's
  else if (named) out.push({ domain: icann, strength: 2 });
  else if (!hostNamed) out.push({ domain: icann, strength: 1 });
  return out;
}

/**
 * Assign every claimed domain to exactly one brand. Returns slug -> sorted domains and a
 * report of contested domains.
 */
export function assignDomains(
  brands: DomainBrand[],
  overrides: DomainOverrides,
): { domains: Map<string, string[]>; report: DomainReport } {
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const claims = new Map<string, Claim[]>();
  const add = (domain: string, claim: Claim) => {
    const list = claims.get(domain) ?? [];
    const same = list.find((c) => c.brand === claim.brand);
    if (same) {
      same.strength = Math.max(same.strength, claim.strength);
      same.fromSource ||= claim.fromSource;
    } else {
      list.push(claim);
      claims.set(domain, list);
    }
  };
  const unknownOverrideSlugs = Object.keys(overrides).filter(
    (slug) => !slug.startsWith("$") && !bySlug.has(slug),
  );

  for (const brand of brands) {
    const removals = (overrides[brand.slug] ?? []).filter((d) => d.startsWith("!"));
    const removeAll = removals.includes("!*");
    const removed = new Set(removals.map((d) => normalizeHost(d.slice(1))));
    if (removeAll) continue;
    const urls = [brand.sourceUrl, ...brand.otherUrls].filter((u): u is string => Boolean(u));
    urls.forEach((url, i) => {
      for (const { domain, strength } of claimsFromUrl(brand, url)) {
        if (!removed.has(domain)) add(domain, { brand, strength, fromSource: i === 0 });
      }
    });
  }

  const overridden = new Map<string, string>();
  for (const [slug, list] of Object.entries(overrides)) {
    const brand = bySlug.get(slug);
    if (!brand) continue;
    for (const raw of list) {
      if (raw.startsWith("!")) continue;
      const domain = normalizeHost(raw);
      const other = overridden.get(domain);
      if (other && other !== slug) {
        throw new Error(`domain override ${domain} given to both ${other} and ${slug}`);
      }
      overridden.set(domain, slug);
      add(domain, { brand, strength: 4, fromSource: true });
    }
  }

  const contested: DomainReport["contested"] = [];
  const result = new Map<string, string[]>();
  for (const [domain, list] of [...claims].sort(([a], [b]) => a.localeCompare(b))) {
    let winner: Claim | null = null;
    let rule = "only claimant";
    if (list.length === 1) winner = list[0] ?? null;
    else {
      const top = Math.max(...list.map((c) => c.strength));
      const best = list.filter((c) => c.strength === top);
      const order = (a: Claim, b: Claim) =>
        Number(b.brand.fromSimpleIcons) - Number(a.brand.fromSimpleIcons) ||
        Number(b.fromSource) - Number(a.fromSource) ||
        a.brand.id - b.brand.id;
      best.sort(order);
      const tie = (a: Claim, b: Claim) =>
        a.brand.fromSimpleIcons !== b.brand.fromSimpleIcons
          ? "simple-icons brand over iconify-only"
          : a.fromSource !== b.fromSource
            ? "source URL over guidelines/other URL"
            : "lowest id";
      const level = LEVELS[top] ?? "";
      const [first, second] = best;
      if (top === 1 && list.length >= 3) rule = "shared by 3+ brands it does not name: unassigned";
      else if (!first || !second) rule = level;
      else rule = `${level}, then ${tie(first, second)}`;
      winner = top === 1 && list.length >= 3 ? null : (first ?? null);
      contested.push({
        domain,
        claimants: list.map((c) => c.brand.slug),
        winner: winner?.brand.slug ?? null,
        rule,
      });
    }
    if (winner) {
      const ds = result.get(winner.brand.slug) ?? [];
      ds.push(domain);
      result.set(winner.brand.slug, ds);
    }
  }
  for (const ds of result.values()) ds.sort();
  return {
    domains: result,
    report: {
      brandsWithDomain: result.size,
      domains: [...result.values()].reduce((n, ds) => n + ds.length, 0),
      contested,
      unknownOverrideSlugs,
    },
  };
}
