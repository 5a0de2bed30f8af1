/**
 * Web logo discovery: reads a brand's own website for its logo, name and colour, in the
 * background, and hands what it found to the enrichment service (EnrichmentService
 * .applyDiscovery), which stores nothing itself but applies the record to the catalog and
 * derives dark/light variants and colour roles as for any brand.
 *
 * Jobs: one per registrable domain, queued by lookups of unknown domains and of brands without
 * artwork (`request`), at most `queueSize` waiting (a full queue drops and counts the request)
 * and `workers` running. A domain is attempted at most once a day unless an operator asks
 * (`discover(..., { force: true })`); a found domain is not fetched again automatically; a
 * taken-down domain never is. Every job's outbound traffic goes through GuardedFetcher.
 */
import { readFileSync } from "node:fs";
import tls from "node:tls";
import { slugify } from "transliteration";
import type { Config } from "../../config";
import { systemTimers, type Timers } from "../../platform/clock";
import { log } from "../../platform/log";
import { registrableDomain } from "../brand/domain";
import { type EnrichableCatalog, EnrichmentService, recolorMono, WEB_SOURCE } from "../enrichment";
import type {
  DiscoveredAsset,
  DiscoveryRecord,
  DiscoveryStore,
  EnrichmentStore,
} from "../enrichment-port";
import { hasArtwork } from "../service";
import { type Brand, type StoredSvg, VARIANTS, type Variant } from "../types";
import { Refused } from "./address";
import { type Artwork, MIN_RASTER_SIDE, rasterSide, rasterSource, sha256 } from "./artwork";
import { ArtworkPool } from "./artwork-pool";
import {
  BIMI_PEM_MAX_BYTES,
  BIMI_SVG_MAX_BYTES,
  certificateSvg,
  dohTxt,
  parseBimi,
  systemTxt,
  type TxtResolver,
  tinyPsProblem,
} from "./bimi";
import {
  applyManifest,
  CANDIDATE_SCORES,
  type Candidate,
  extractPage,
  type PageFacts,
  rootIcons,
} from "./extract";
import { FetchError, GuardedFetcher, HTML_MAX_BYTES, IMAGE_MAX_BYTES } from "./fetcher";

export const DOMAIN_BUDGET_MS = 15_000;
export const RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
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
const MANIFEST_MAX_BYTES = 256 * 1024;
/** Discovered brands get ids from here up (catalog ids are far below). */
export const DISCOVERED_ID_BASE = 900_000_000;

export interface DiscoveryCatalog {
  brand(slug: string): Brand | undefined;
  brandById(id: number): Brand | undefined;
  /** the brand whose own domains include this host (the catalog's domain table) */
  brandByHost(host: string): Brand | undefined;
}

export interface DiscoveryOptions {
  enabled: boolean;
  workers: number;
  queueSize: number;
  budgetMs?: number;
}

export interface DiscoveryStats {
  queued: number;
  running: number;
  dropped: number;
  found: number;
  nothing: number;
  refused: number;
  failed: number;
}

/** What a job is for: a domain, and the catalog brand it belongs to when there is one. */
interface Job {
  domain: string;
  brandId: number | null;
  /** filled with every candidate's outcome (discover --report) */
  trail?: TrailEntry[];
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

type Found = { artwork: Artwork; asset: Omit<DiscoveredAsset, "variant"> };

/** A found record whose artwork is all low-resolution (tried again after RETRY_AFTER_MS). */
const lowResOnly = (r: DiscoveryRecord) =>
  r.status === "found" && r.assets.length > 0 && r.assets.every((a) => a.lowRes);

/** A brand whose colour artwork is a discovered raster under MIN_RASTER_SIDE. */
function lowResArtwork(b: Brand): boolean {
  const side = b.variants.color ? rasterSide(b.variants.color.source) : null;
  return side !== null && side < MIN_RASTER_SIDE;
}

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

export class DiscoveryService {
  private queue: Job[] = [];
  private pending = new Set<string>();
  private running = 0;
  /** domain -> epoch ms of its last attempt that found nothing, failed or was refused */
  private attempted = new Map<string, number>();
  private waiters: (() => void)[] = [];
  /** TXT lookups for BIMI records (system DNS or DoH); null: BIMI is not tried */
  txt: TxtResolver | null = null;
  /** the timers `waitFor` ends its waits with (a test moves its own) */
  timers: Timers = systemTimers;
  /** domain -> callbacks run when its queued or running job ends (GET /v1/brand?wait=) */
  private jobWaiters = new Map<string, Set<() => void>>();
  private closed = false;
  readonly counts: DiscoveryStats = {
    queued: 0,
    running: 0,
    dropped: 0,
    found: 0,
    nothing: 0,
    refused: 0,
    failed: 0,
  };

  constructor(
    private store: DiscoveryStore,
    private enrichment: EnrichmentService,
    private catalog: DiscoveryCatalog,
    readonly fetcher: GuardedFetcher,
    private options: DiscoveryOptions,
    /** svgo, resvg and sharp off the request thread (shared with enrichment; its owner stops it) */
    private artworkPool: ArtworkPool = new ArtworkPool(),
  ) {}

  get enabled() {
    return this.options.enabled;
  }

  /** Read earlier attempts, so a restart does not retry a domain the same day. */
  async start() {
    for (const r of await this.store.discoveries()) {
      if (r.status !== "found" && r.status !== "taken_down") {
        const at = Date.parse(r.at);
        if (Date.now() - at < RETRY_AFTER_MS) this.attempted.set(r.domain, at);
      }
    }
  }

  stats(): DiscoveryStats {
    return { ...this.counts, queued: this.queue.length, running: this.running };
  }

  /**
   * The domain to discover a catalog brand on: its website's registrable domain when the brand
   * lists it, else the first registrable domain it lists itself, else its website's, else the
   * registrable domain of its first host.
   */
  static domainOf(b: Brand): string | null {
    const reg = (h: string) => registrableDomain(h.replace(/^www\./, ""));
    let website: string | null = null;
    try {
      website = b.links?.website ? reg(new URL(b.links.website).hostname) : null;
    } catch {}
    const own = b.domains.map((h) => h.replace(/^www\./, ""));
    if (website && own.includes(website)) return website;
    const exact = own.find((h) => reg(h) === h);
    if (exact) return exact;
    if (website) return website;
    for (const h of own) {
      const d = reg(h);
      if (d) return d;
    }
    return null;
  }

  /**
   * Queue discovery for a catalog brand without artwork (or with only low-resolution
   * discovered artwork). Never throws; true when queued.
   */
  requestBrand(b: Brand): boolean {
    if (!this.options.enabled || (hasArtwork(b) && !lowResArtwork(b))) return false;
    const domain = DiscoveryService.domainOf(b);
    return domain ? this.enqueue({ domain, brandId: b.id }) : false;
  }

  /** Queue discovery for a host no brand has (its registrable domain). */
  requestDomain(host: string): boolean {
    if (!this.options.enabled) return false;
    const domain = registrableDomain(host);
    return domain ? this.enqueue({ domain, brandId: null }) : false;
  }

  private due(domain: string): boolean {
    const known = this.enrichment.discoveryOf(domain); // found or taken down
    // found: not fetched again, unless all it has is low-resolution artwork
    if (known && !(lowResOnly(known) && Date.now() - Date.parse(known.at) >= RETRY_AFTER_MS))
      return false;
    const at = this.attempted.get(domain);
    return at === undefined || Date.now() - at >= RETRY_AFTER_MS;
  }

  private enqueue(job: Job): boolean {
    try {
      if (!this.options.enabled || this.closed || this.pending.has(job.domain)) return false;
      if (!this.due(job.domain)) return false;
      if (this.queue.length >= this.options.queueSize) {
        this.counts.dropped++;
        return false;
      }
      this.pending.add(job.domain);
      this.queue.push(job);
      setTimeout(() => this.pump(), 0);
      return true;
    } catch (err) {
      log("warn", "discovery request failed", { domain: job.domain, error: String(err) });
      return false;
    }
  }

  private pump() {
    while (this.running < this.options.workers && this.queue.length) {
      const job = this.queue.shift() as Job;
      this.running++;
      void this.run(job, false)
        .catch((err) =>
          log("warn", "discovery job failed", { domain: job.domain, error: String(err) }),
        )
        .finally(() => {
          this.pending.delete(job.domain);
          for (const w of this.jobWaiters.get(job.domain) ?? []) w();
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0)
            for (const w of this.waiters.splice(0)) w();
        });
    }
  }

  /**
   * Waits at most `ms` for the queued or running job of `host`'s registrable domain: true
   * when it ended (its result is applied to the catalog), false when it did not in time or
   * none is queued. A promise on the job: no thread or worker is held.
   */
  waitFor(host: string, ms: number): Promise<boolean> {
    const domain = registrableDomain(host);
    if (!domain || !this.pending.has(domain) || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiters = this.jobWaiters.get(domain) ?? new Set<() => void>();
      this.jobWaiters.set(domain, waiters);
      const settle = (ended: boolean) => {
        this.timers.clearTimeout(timer);
        waiters.delete(done);
        if (!waiters.size) this.jobWaiters.delete(domain);
        resolve(ended);
      };
      const done = () => settle(true);
      const timer = this.timers.setTimeout(() => settle(false), ms);
      waiters.add(done);
    });
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  async close() {
    this.closed = true;
    this.queue.length = 0;
    for (const d of this.pending) for (const w of this.jobWaiters.get(d) ?? []) w();
    this.pending.clear();
    await this.idle();
  }

  /**
   * Discover one domain now (operators: CLI, admin routes) and apply the result. `force`
   * fetches again even when the domain was tried today or already found; a takedown is final.
   */
  async discover(
    host: string,
    opts: { force?: boolean; trail?: TrailEntry[] } = {},
  ): Promise<DiscoveryRecord> {
    const domain = domainOfInput(host);
    const brand = this.ownerOf(domain);
    return this.run(
      { domain, brandId: brand?.id ?? null, ...(opts.trail ? { trail: opts.trail } : {}) },
      opts.force ?? false,
    );
  }

  /** Stored records, newest first, optionally of one status. */
  async list(status?: DiscoveryRecord["status"]): Promise<DiscoveryRecord[]> {
    const all = await this.store.discoveries();
    return all.filter((r) => !status || r.status === status).sort((a, b) => (a.at < b.at ? 1 : -1));
  }

  /**
   * Take a domain's discovered artwork down for good (a domain not yet discovered is blocked
   * before it is). Rediscovery never brings it back.
   */
  async takedown(host: string): Promise<DiscoveryRecord> {
    const domain = domainOfInput(host);
    const previous = await this.store.discovery(domain);
    if (previous?.status === "taken_down") return previous;
    const record: DiscoveryRecord = {
      ...(previous ?? emptyRecord(domain, null)),
      status: "taken_down",
      at: new Date().toISOString(),
      reason: "taken down by an operator",
      variants: {},
    };
    const saved = await this.store.saveDiscovery(record);
    this.enrichment.applyDiscovery(saved);
    return saved;
  }

  /**
   * The catalog brand a domain belongs to: the one listing it (or www.it) among its domains
   * (the catalog's domains table). What is found on a domain is stored on its owner, wherever
   * the home page redirects.
   */
  private ownerOf(domain: string): Brand | null {
    return this.catalog.brandByHost(domain) ?? this.catalog.brandByHost(`www.${domain}`) ?? null;
  }

  private async run(job: Job, force: boolean): Promise<DiscoveryRecord> {
    const stored = await this.store.discovery(job.domain);
    if (stored?.status === "taken_down") {
      this.enrichment.applyDiscovery(stored);
      return stored;
    }
    // another instance (or the CLI) got there first: use its result
    if (stored && !force) {
      const fresh = Date.now() - Date.parse(stored.at) < RETRY_AFTER_MS;
      if ((stored.status === "found" && !(lowResOnly(stored) && !fresh)) || fresh) {
        if (stored.status === "found") this.enrichment.applyDiscovery(stored);
        else this.attempted.set(job.domain, Date.parse(stored.at));
        return stored;
      }
    }
    const attempted = await this.attempt(job);
    this.counts[attempted.status as keyof DiscoveryStats]++;
    // an attempt that finds nothing keeps what an earlier one found (and notes when it tried)
    const record =
      stored?.status === "found" && attempted.status !== "found"
        ? { ...stored, at: attempted.at }
        : attempted;
    const saved = await this.store.saveDiscovery(record);
    if (saved.status === "found") {
      this.attempted.delete(job.domain);
      this.enrichment.applyDiscovery(saved);
    } else if (saved.status !== "taken_down") this.attempted.set(job.domain, Date.now());
    log("info", "discovery finished", {
      domain: job.domain,
      status: saved.status,
      reason: saved.reason,
      slug: saved.slug,
    });
    return saved;
  }

  /** Fetch and read the site; never throws (every outcome is a record). */
  private async attempt(job: Job): Promise<DiscoveryRecord> {
    const at = () => new Date().toISOString();
    // the domain's owner, whichever brand asked and wherever the home page redirects
    const brand =
      job.brandId === null ? null : (this.ownerOf(job.domain) ?? this.brandById(job.brandId));
    const base = emptyRecord(job.domain, brand?.id ?? null);
    const deadline = Date.now() + (this.options.budgetMs ?? DOMAIN_BUDGET_MS);
    // BIMI is looked up while the home page loads (its result is used first)
    const bimi = this.bimi(job.domain, deadline, job.trail);
    bimi.catch(() => {}); // awaited below; a home page failure leaves it unread
    try {
      const page = await this.fetcher.homepage(job.domain, {
        maxBytes: HTML_MAX_BYTES,
        deadline,
        accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
      });
      base.pageUrl = page.url;
      if (page.redirects.length) base.redirects = page.redirects;
      const finalDomain = registrableDomain(new URL(page.url).hostname);
      if (finalDomain && finalDomain !== job.domain) base.aliases = [finalDomain];
      const facts = await this.facts(page, job.domain, deadline);
      if (typeof facts === "string") return { ...base, at: at(), reason: facts };
      if (!brand && !facts.name) {
        const why = page.status === 200 ? "" : `home page answered HTTP ${page.status}; `;
        return { ...base, at: at(), reason: `${why}the site names no brand` };
      }
      const art = await this.artwork(facts.candidates, page.url, deadline, job.trail, await bimi);
      if (!art.color && !art.mono)
        return { ...base, at: at(), reason: art.reason ?? "no usable logo" };
      // a brand discovery made earlier (rediscovery) stays a discovered brand
      const made = brand?.sources.length === 1 && brand.sources[0] === WEB_SOURCE;
      const identity = brand
        ? {
            brandId: brand.id,
            slug: brand.slug,
            created: made,
            name: made ? (facts.name ?? brand.name) : brand.name,
          }
        : {
            ...this.newIdentity(job.domain, facts.name as string),
            created: true,
            name: facts.name,
          };
      return {
        ...base,
        ...identity,
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

  /**
   * The domain's BIMI logo, tried before the page's candidates: its TXT record, the SVG it
   * names (https, at most 32 KB, SVG Tiny PS-like: square viewBox, no script), and, when the
   * record names a mark certificate, whether the certificate carries the same SVG. Null when
   * there is none or it is unusable (the reason goes to the trail); an address the SSRF rules
   * refuse refuses the domain, as for any candidate.
   */
  private async bimi(domain: string, deadline: number, trail?: TrailEntry[]) {
    if (!this.txt) return null;
    let record: ReturnType<typeof parseBimi>;
    try {
      record = parseBimi(await this.txt(`default._bimi.${domain}`));
    } catch {
      return null; // no DNS answer: as if there were no record
    }
    if (!record?.logo) return null;
    const entry: TrailEntry = {
      origin: "bimi",
      url: record.logo,
      score: CANDIDATE_SCORES.bimi,
      outcome: "",
    };
    trail?.push(entry);
    const get = (url: string, maxBytes: number, accept: string) =>
      this.fetcher.get(url, { maxBytes, deadline, accept });
    try {
      if (!record.logo.startsWith("https://")) throw new Error("l= is not an https URL");
      const r = await get(record.logo, BIMI_SVG_MAX_BYTES, "image/svg+xml");
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
      const text = r.body.toString("utf8");
      const problem = tinyPsProblem(text);
      if (problem) throw new Error(problem);
      const artwork = await this.artworkPool.process({
        kind: "svg",
        text,
        idPrefix: `w${sha256(record.logo).slice(0, 6)}`,
        forceMono: false,
      });
      let verifiedMark: boolean | undefined;
      if (record.certificate) {
        if (!record.certificate.startsWith("https://")) throw new Error("a= is not an https URL");
        const pem = await get(record.certificate, BIMI_PEM_MAX_BYTES, "application/x-pem-file");
        if (pem.status !== 200) throw new Error(`certificate: HTTP ${pem.status}`);
        let carried: string | null = null;
        try {
          carried = certificateSvg(pem.body.toString("utf8"));
        } catch {}
        verifiedMark = carried !== null && carried.trim() === text.trim();
      }
      const c: Candidate = {
        origin: "bimi",
        score: CANDIDATE_SCORES.bimi,
        url: record.logo,
        declared: 0,
      };
      const asset = this.asset(c, r.url, new Date().toISOString(), sha256(r.body), artwork);
      return {
        artwork,
        asset: verifiedMark === undefined ? asset : { ...asset, verifiedMark },
      } satisfies Found;
    } catch (err) {
      if (err instanceof Refused) throw err;
      entry.outcome = `failed: ${(err as Error).message}`;
      return null;
    }
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
    return this.catalog.brandById(id) ?? null;
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

  /**
   * Candidates best first, at most MAX_CANDIDATES fetched: the best square artwork becomes the
   * colour variant (any vector, else the largest raster up to 512 px; a raster under 32 px
   * only when nothing larger works), a wide header logo the wordmark, a mask-icon or a
   * single-colour SVG the mono mark. `trail` gets every candidate's outcome.
   */
  private async artwork(
    candidates: Candidate[],
    pageUrl: string,
    deadline: number,
    trail: TrailEntry[] = [],
    first: Found | null = null,
  ) {
    let color: Found | null = first;
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
        found = await this.candidate(c, pageUrl, deadline);
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
    if (first) entries.set(first, trail.find((e) => e.origin === "bimi") as TrailEntry);
    // no square artwork: the wordmark serves as the colour artwork too
    color ??= wordmark;
    if (!mono && color?.artwork.single) mono = color;
    for (const [f, variant] of [
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
    const stored = (a: Artwork): StoredSvg => ({
      svg: a.svg,
      sha256: sha256(a.svg),
      source: a.kind === "svg" ? "web:svg" : rasterSource(a.width, a.height),
    });
    if (color) {
      variants.color = stored(color.artwork);
      assets.push({ ...color.asset, variant: "color" });
    }
    if (wordmark) {
      variants.wordmark = stored(wordmark.artwork);
      assets.push({ ...wordmark.asset, variant: "wordmark" });
    }
    if (mono) {
      // the mark in black, as catalog mono marks are; dark and light are derived from it
      const black = recolorMono(mono.artwork.svg, "000000").svg;
      variants.mono = { svg: black, sha256: sha256(black), source: "web:svg" };
      assets.push({ ...mono.asset, variant: "mono" });
    } else if (variants.color) {
      // multi-colour or raster artwork serves light and dark backgrounds as it is
      variants.dark = variants.color;
      variants.light = variants.color;
    }
    return { color, mono, variants, assets, reason };
  }

  private async candidate(c: Candidate, pageUrl: string, deadline: number) {
    const fetchedAt = new Date().toISOString();
    const prefix = `w${sha256(c.url ?? pageUrl).slice(0, 6)}`;
    if (c.svg !== undefined) {
      const artwork = await this.artworkPool.process({
        kind: "svg",
        text: c.svg,
        idPrefix: prefix,
        forceMono: false,
      });
      return {
        artwork,
        asset: this.asset(c, `${pageUrl}#inline-svg`, fetchedAt, sha256(c.svg), artwork),
      };
    }
    const r = await this.image(c.url as string, pageUrl, deadline);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    const head = r.body.subarray(0, 512).toString("utf8").trimStart();
    const isSvg = r.contentType.includes("svg") || /^(?:<\?xml|<svg|<!--)/i.test(head);
    const artwork = await this.artworkPool.process(
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
    return { artwork, asset: this.asset(c, r.url, fetchedAt, sha256(r.body), artwork) };
  }

  /**
   * An image by URL. A site whose home page only answered over http gets its https image
   * URLs tried over http too when https cannot connect (as for the page).
   */
  private async image(url: string, pageUrl: string, deadline: number) {
    const opts = {
      maxBytes: IMAGE_MAX_BYTES,
      deadline,
      accept: "image/svg+xml,image/png,image/webp,image/*;q=0.8",
    };
    try {
      return await this.fetcher.get(url, opts);
    } catch (err) {
      const insecurePage = pageUrl.startsWith("http:") && url.startsWith("https:");
      if (!insecurePage || !(err instanceof FetchError) || err.code !== "connect") throw err;
      return this.fetcher.get(`http:${url.slice("https:".length)}`, opts);
    }
  }

  private asset(
    c: Candidate,
    sourceUrl: string,
    fetchedAt: string,
    hash: string,
    a: Artwork,
  ): Omit<DiscoveredAsset, "variant"> {
    return {
      sourceUrl,
      fetchedAt,
      sha256: hash,
      kind: a.kind,
      width: a.source.width,
      height: a.source.height,
      score: c.score,
      origin: c.origin,
      ...(a.lowRes ? { lowRes: true } : {}),
    };
  }

  /** A stable id and a unique slug for a brand new to the catalog. */
  private newIdentity(domain: string, name: string): { brandId: number; slug: string } {
    let id = DISCOVERED_ID_BASE + (Number.parseInt(sha256(domain).slice(0, 8), 16) % 90_000_000);
    while (this.brandById(id)) id++;
    const taken = (s: string) => !s || this.catalog.brand(s) !== undefined;
    const fromName = slugify(name, { lowercase: true, separator: "-" }).replace(/[^a-z0-9-]/g, "");
    const fromDomain = domain.replace(/[^a-z0-9]+/g, "-");
    let slug = [fromName, fromDomain].find((s) => !taken(s));
    for (let n = 2; !slug; n++) if (!taken(`${fromDomain}-${n}`)) slug = `${fromDomain}-${n}`;
    return { brandId: id, slug };
  }
}

/** The User-Agent of every discovery request: the service's name and where to read about it. */
export function discoveryUserAgent(publicUrl: string | undefined): string {
  return `BrandAssetAPI-LogoDiscovery/1.0 (+${publicUrl ?? "https://brandassets.dev"}/docs/discovery)`;
}

/** The discovery service as the configuration says (DISCOVERY*, PUBLIC_URL). */
export function createDiscovery(
  config: Pick<
    Config,
    | "DISCOVERY"
    | "DISCOVERY_PROXY"
    | "DISCOVERY_ALLOW_PRIVATE"
    | "DISCOVERY_PROXY_RESOLVES"
    | "DISCOVERY_CA_FILE"
    | "DISCOVERY_DOH_URL"
    | "DISCOVERY_WORKERS"
    | "DISCOVERY_QUEUE"
    | "PUBLIC_URL"
  >,
  store: DiscoveryStore,
  enrichment: EnrichmentService,
  catalog: DiscoveryCatalog,
  artworkPool: ArtworkPool,
): DiscoveryService {
  if (config.DISCOVERY_ALLOW_PRIVATE)
    log(
      "warn",
      "DISCOVERY_ALLOW_PRIVATE is on: discovery may fetch loopback addresses (tests only)",
    );
  if (config.DISCOVERY_PROXY_RESOLVES && !config.DISCOVERY_PROXY)
    log("warn", "DISCOVERY_PROXY_RESOLVES is on without DISCOVERY_PROXY: hosts are resolved here");
  const fetcher = new GuardedFetcher({
    userAgent: discoveryUserAgent(config.PUBLIC_URL),
    proxy: config.DISCOVERY_PROXY ?? null,
    allowLoopback: config.DISCOVERY_ALLOW_PRIVATE,
    proxyResolves: config.DISCOVERY_PROXY_RESOLVES,
    ...(config.DISCOVERY_CA_FILE ? { ca: trustedCas(config.DISCOVERY_CA_FILE) } : {}),
  });
  const service = new DiscoveryService(
    store,
    enrichment,
    catalog,
    fetcher,
    {
      enabled: config.DISCOVERY,
      workers: config.DISCOVERY_WORKERS,
      queueSize: config.DISCOVERY_QUEUE,
    },
    artworkPool,
  );
  // BIMI records: over DoH when configured, else the system's DNS unless the proxy resolves
  // (then this host has no DNS to ask)
  service.txt = config.DISCOVERY_DOH_URL
    ? dohTxt(config.DISCOVERY_DOH_URL, fetcher)
    : config.DISCOVERY_PROXY && config.DISCOVERY_PROXY_RESOLVES
      ? null
      : systemTxt();
  return service;
}

/**
 * The system's CA certificates plus the ones in `file` (PEM: a TLS-inspecting egress proxy's
 * CA). A file that cannot be read, or holds no certificate, stops the start.
 */
export function trustedCas(file: string): string[] {
  const pem = readFileSync(file, "utf8");
  const certs = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!certs) throw new Error(`DISCOVERY_CA_FILE ${file} holds no PEM certificate`);
  return [...tls.rootCertificates, ...certs];
}

/** The registrable domain an operator means ("WWW.Example.com" -> "example.com"); throws. */
function domainOfInput(host: string): string {
  const domain = registrableDomain(
    host
      .trim()
      .toLowerCase()
      .replace(/^www\./, ""),
  );
  if (!domain) throw new Error(`${host} has no registrable domain`);
  return domain;
}

/** A record with nothing found yet (its status "nothing"). */
export function emptyRecord(domain: string, brandId: number | null): DiscoveryRecord {
  return {
    domain,
    status: "nothing",
    at: new Date().toISOString(),
    reason: null,
    brandId,
    slug: null,
    created: false,
    name: null,
    brandColor: null,
    pageUrl: null,
    aliases: [],
    variants: {},
    assets: [],
  };
}

/** A record as operators see it: provenance and variant names, no markup. */
export function discoveryView(r: DiscoveryRecord) {
  const { variants, ...rest } = r;
  return { ...rest, variants: VARIANTS.filter((v) => variants[v] !== undefined) };
}

/** Number of records per status. */
export function summarize(records: DiscoveryRecord[]): Record<string, number> {
  const out: Record<string, number> = {
    found: 0,
    nothing: 0,
    refused: 0,
    failed: 0,
    taken_down: 0,
  };
  for (const r of records) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/**
 * Enrichment and discovery over a loaded catalog, as the service and the admin CLI run them:
 * one background Worker for their CPU work, discovery records replayed, earlier attempts read.
 */
export async function startEnrichment(
  config: Parameters<typeof createDiscovery>[0],
  store: EnrichmentStore & DiscoveryStore,
  catalog: EnrichableCatalog & DiscoveryCatalog,
) {
  const artworkPool = new ArtworkPool();
  const enrichment = new EnrichmentService(store, catalog);
  enrichment.useDeriver((b) => artworkPool.derive(b));
  enrichment.useDiscoveries(store);
  await enrichment.start();
  const discovery = createDiscovery(config, store, enrichment, catalog, artworkPool);
  await discovery.start();
  return {
    enrichment,
    discovery,
    /** stop taking jobs, wait for the running ones, end the Worker */
    async close() {
      await discovery.close();
      await enrichment.close();
      artworkPool.stop();
    },
  };
}
