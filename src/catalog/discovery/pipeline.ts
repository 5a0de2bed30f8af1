import { slugify } from "transliteration";
import { registrableDomain } from "../brand/domain";
import type { Brand } from "../built-catalog";
import { WEB_SOURCE } from "../enrichment/service";
import { Refused } from "./address";
import { sha256 } from "./artwork";
import {
  type ArtworkReading,
  chooseArtwork,
  IMAGE_ACCEPT,
  storedArt,
  type TrailEntry,
  validatorsOf,
} from "./artwork-choice";
import type { ArtworkPool } from "./artwork-pool";
import { parseBimi, type TxtResolver } from "./bimi";
import { type BimiReading, type BimiResult, bimiLogo } from "./bimi-logo";
import { applyManifest, extractPage, type PageFacts, rootIcons } from "./extract";
import {
  FetchError,
  type FetchResult,
  type GuardedFetcher,
  HTML_MAX_BYTES,
  IMAGE_MAX_BYTES,
  type Validators,
} from "./fetcher";
import { markRoots } from "./mark";
import { emptyRecord } from "./records";
import type { DiscoveryRecord } from "./store/port";
import type { X509Certificate } from "./x509";

/**
 * One attempt on one domain: its home page read through the guarded fetcher for the brand's
 * name, colour and logo candidates, its BIMI logo looked up meanwhile, the candidates chosen
 * into variants (artwork-choice.ts), and the outcome as a record (found, nothing, refused,
 * failed). Stores nothing: the service (service.ts) decides what is kept.
 */

/** Time budget of one domain's attempt (every request of it), in ms. */
export const DOMAIN_BUDGET_MS = 15_000;
const HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
const MANIFEST_MAX_BYTES = 256 * 1024;
/** Discovered brands get ids from here up (catalog ids are far below). */
export const DISCOVERED_ID_BASE = 900_000_000;

/** The catalog as discovery reads it. */
export interface DiscoveryCatalog {
  brand(slug: string): Brand | undefined;
  brandById(id: number): Brand | undefined;
  /** the brand whose own domains include this host (the catalog's domain table) */
  brandByHost(host: string): Brand | undefined;
}

/** What a job is for: a domain, and the catalog brand it belongs to when there is one. */
export interface Job {
  domain: string;
  brandId: number | null;
  /** filled with every candidate's outcome (discover --report) */
  trail?: TrailEntry[];
}

export class SiteReader implements ArtworkReading, BimiReading {
  /** TXT lookups for BIMI records (system DNS or DoH); null: BIMI is not tried */
  txt: TxtResolver | null = null;
  /** trust anchors of BIMI mark certificates (the bundled roots, DISCOVERY_VMC_ROOTS) */
  vmcRoots: X509Certificate[] = markRoots();
  /** the clock (epoch ms): record times, a mark certificate's validity */
  now: () => number = Date.now;
  readonly fetcher: GuardedFetcher;
  readonly artworkPool: ArtworkPool;
  private budgetMs: number;

  constructor(
    private deps: {
      catalog: DiscoveryCatalog;
      fetcher: GuardedFetcher;
      /** svgo, resvg and sharp off the request thread */
      artworkPool: ArtworkPool;
      /** one domain's time budget (DOMAIN_BUDGET_MS) */
      budgetMs?: number;
    },
  ) {
    this.fetcher = deps.fetcher;
    this.artworkPool = deps.artworkPool;
    this.budgetMs = deps.budgetMs ?? DOMAIN_BUDGET_MS;
  }

  /**
   * The catalog brand a domain belongs to: the one listing it (or www.it) among its domains
   * (the catalog's domains table). What is found on a domain is stored on its owner, wherever
   * the home page redirects.
   */
  ownerOf(domain: string): Brand | null {
    return (
      this.deps.catalog.brandByHost(domain) ??
      this.deps.catalog.brandByHost(`www.${domain}`) ??
      null
    );
  }

  /**
   * Whether a due check finds the domain as it was, asking only conditional GETs: the home page
   * (https) and every stored asset answer 304 to their ETag / Last-Modified, the BIMI record
   * names the same URLs, and a verified mark's certificate is still valid. Anything else
   * (a 200, no validators to ask with, an error) answers false and the site is read again.
   */
  async unchanged(previous: DiscoveryRecord): Promise<boolean> {
    const page = previous.pageUrl;
    if (!page?.startsWith("https:") || !previous.pageValidators) return false;
    const deadline = Date.now() + this.budgetMs;
    try {
      const bimi = this.txt ? parseBimi(await this.txt(`default._bimi.${previous.domain}`)) : null;
      const was = previous.bimi;
      if ((bimi?.logo ?? null) !== (was?.logo ?? null)) return false;
      if ((bimi?.certificate ?? null) !== (was?.certificate ?? null)) return false;
      if (was?.verifiedMark && was.notAfter && Date.parse(was.notAfter) < this.now()) return false;
      const checks: [string, Validators | undefined, string][] = [
        [page, previous.pageValidators, HTML_ACCEPT],
      ];
      for (const a of previous.assets)
        if (!a.sourceUrl.includes("#inline-svg") && !checks.some(([u]) => u === a.sourceUrl))
          checks.push([a.sourceUrl, a.etag || a.lastModified ? a : undefined, IMAGE_ACCEPT]);
      for (const [url, validators, accept] of checks) {
        if (!validators) return false;
        const r = await this.fetcher.get(url, {
          maxBytes: IMAGE_MAX_BYTES,
          deadline,
          accept,
          validators,
        });
        if (r.status !== 304) return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Fetch and read the site; never throws (every outcome is a record). */
  async attempt(job: Job): Promise<DiscoveryRecord> {
    const at = () => new Date(this.now()).toISOString();
    // the domain's owner, whichever brand asked and wherever the home page redirects
    const brand =
      job.brandId === null ? null : (this.ownerOf(job.domain) ?? this.brandById(job.brandId));
    const base = { ...emptyRecord(job.domain, brand?.id ?? null), at: at() };
    const deadline = Date.now() + this.budgetMs;
    // BIMI is looked up while the home page loads, and used even when the page fails
    const bimiLookup = bimiLogo(this, job.domain, deadline, job.trail);
    bimiLookup.catch(() => {}); // awaited below
    try {
      let page: FetchResult;
      try {
        page = await this.fetcher.homepage(job.domain, {
          maxBytes: HTML_MAX_BYTES,
          deadline,
          accept: HTML_ACCEPT,
        });
      } catch (err) {
        if (err instanceof Refused) throw err;
        const bimi = await bimiLookup;
        const reason = err instanceof FetchError ? `${err.code}: ${err.message}` : String(err);
        return (
          this.fromBimi(base, brand, bimi, at()) ?? {
            ...base,
            status: "failed",
            at: at(),
            reason,
            ...(bimi ? { bimi: bimi.check } : {}),
          }
        );
      }
      base.pageUrl = page.url;
      const validators = validatorsOf(page);
      if (Object.keys(validators).length) base.pageValidators = validators;
      if (page.redirects.length) base.redirects = page.redirects;
      const finalDomain = registrableDomain(new URL(page.url).hostname);
      if (finalDomain && finalDomain !== job.domain) base.aliases = [finalDomain];
      const facts = await this.facts(page, job.domain, deadline);
      const bimi = await bimiLookup;
      if (bimi) base.bimi = bimi.check;
      // a verified mark names its organisation: a name when the page gives none
      const markName = bimi?.check.verifiedMark ? (bimi.check.organization ?? null) : null;
      if (typeof facts === "string")
        return this.fromBimi(base, brand, bimi, at()) ?? { ...base, at: at(), reason: facts };
      if (!brand && !facts.name && !markName) {
        const why = page.status === 200 ? "" : `home page answered HTTP ${page.status}; `;
        return { ...base, at: at(), reason: `${why}the site names no brand` };
      }
      const art = await chooseArtwork(
        this,

        facts.candidates,
        page.url,
        deadline,
        job.trail,
        bimi?.found ?? null,
      );
      if (!art.color && !art.mono)
        return { ...base, at: at(), reason: art.reason ?? "no usable logo" };
      const name = facts.name ?? markName;
      return {
        ...base,
        ...this.identity(job.domain, brand, name),
        status: "found",
        at: at(),
        brandColor: facts.themeColor ?? art.color?.artwork.dominant ?? null,
        variants: art.variants,
        assets: art.assets,
      };
    } catch (err) {
      if (err instanceof Refused)
        return { ...base, status: "refused", at: at(), reason: err.message };
      const reason = err instanceof FetchError ? `${err.code}: ${err.message}` : String(err);
      return { ...base, status: "failed", at: at(), reason };
    }
  }

  /** Who the artwork belongs to: the catalog brand, or a new brand named `name`. */
  private identity(domain: string, brand: Brand | null, name: string | null) {
    // a brand discovery made earlier (rediscovery) stays a discovered brand
    const made = brand?.sources.length === 1 && brand.sources[0] === WEB_SOURCE;
    return brand
      ? {
          brandId: brand.id,
          slug: brand.slug,
          created: made,
          name: made ? (name ?? brand.name) : brand.name,
        }
      : { ...this.newIdentity(domain, name as string), created: true, name };
  }

  /**
   * The record of a domain whose home page gave nothing (failed, an error page, no brand) but
   * whose BIMI logo is usable: the logo as the icon (and the colour artwork: there is no other),
   * for a catalog brand, or for a new brand named by its verified mark. Null otherwise.
   */
  private fromBimi(
    base: DiscoveryRecord,
    brand: Brand | null,
    bimi: BimiResult | null,
    at: string,
  ): DiscoveryRecord | null {
    const found = bimi?.found;
    if (!bimi || !found) return null;
    const name = bimi.check.verifiedMark ? (bimi.check.organization ?? null) : null;
    if (!brand && !name) return null;
    const svg = storedArt(found);
    return {
      ...base,
      ...this.identity(base.domain, brand, name),
      status: "found",
      at,
      reason: null,
      bimi: bimi.check,
      brandColor: found.artwork.dominant,
      variants: { color: svg, icon: svg },
      assets: [
        { ...found.asset, variant: "icon" },
        { ...found.asset, variant: "color" },
      ],
    };
  }

  /**
   * What the home page says, or why it says nothing. A page answering 4xx (a bot wall, an
   * error page) still has its root icons tried: /apple-touch-icon.png, /favicon.ico.
   */
  private async facts(
    page: { status: number; contentType: string; body: Buffer; url: string },
    domain: string,
    deadline: number,
  ): Promise<PageFacts | string> {
    if (page.status >= 400 && page.status < 500)
      return {
        name: null,
        nameSource: null,
        themeColor: null,
        manifestUrl: null,
        candidates: rootIcons(page.url),
        noBrand: null,
      };
    if (page.status !== 200) return `home page answered HTTP ${page.status}`;
    if (!/html|xml|^$/.test(page.contentType)) return `home page is ${page.contentType}`;
    const facts = extractPage(page.body.toString("utf8"), page.url, domain);
    if (facts.noBrand) return facts.noBrand;
    return facts.manifestUrl ? this.withManifest(facts, facts.manifestUrl, deadline) : facts;
  }

  /** The catalog brand with this id. */
  private brandById(id: number): Brand | null {
    return this.deps.catalog.brandById(id) ?? null;
  }

  private async withManifest(facts: PageFacts, url: string, deadline: number): Promise<PageFacts> {
    try {
      const r = await this.fetcher.get(url, {
        maxBytes: MANIFEST_MAX_BYTES,
        deadline,
        accept: "application/manifest+json,application/json",
      });
      if (r.status !== 200) return facts;
      return applyManifest(facts, JSON.parse(r.body.toString("utf8")), r.url);
    } catch (err) {
      if (err instanceof Refused) throw err;
      return facts;
    }
  }

  /** A stable id and a unique slug for a brand new to the catalog. */
  private newIdentity(domain: string, name: string): { brandId: number; slug: string } {
    let id = DISCOVERED_ID_BASE + (Number.parseInt(sha256(domain).slice(0, 8), 16) % 90_000_000);
    while (this.brandById(id)) id++;
    const taken = (s: string) => !s || this.deps.catalog.brand(s) !== undefined;
    const fromName = slugify(name, { lowercase: true, separator: "-" }).replace(/[^a-z0-9-]/g, "");
    const fromDomain = domain.replace(/[^a-z0-9]+/g, "-");
    let slug = [fromName, fromDomain].find((s) => !taken(s));
    for (let n = 2; !slug; n++) if (!taken(`${fromDomain}-${n}`)) slug = `${fromDomain}-${n}`;
    return { brandId: id, slug };
  }
}
