/**
 * Web logo discovery: reads a brand's own website for its logo, name and colour, in the
 * background, and hands what it found to the enrichment service (EnrichmentService
 * .applyDiscovery), which stores nothing itself but applies the record to the catalog and
 * derives dark/light variants and colour roles as for any brand.
 *
 * Jobs: one per registrable domain, queued by lookups of unknown domains and of brands without
 * artwork (`request`) and by the refresh schedule (`refreshDue`), at most `queueSize` waiting (a
 * full queue drops and counts the request) and `workers` running. A domain is attempted at most
 * once a day unless an operator asks (`discover(..., { force: true })`); a found domain is
 * checked again when its `refreshAt` comes (conditional GETs first); a taken-down domain never
 * is. Every job's outbound traffic goes through GuardedFetcher. Record times, retry and refresh
 * decisions and a mark certificate's validity use the service's clock (`now`).
 */
import { readFileSync } from "node:fs";
import tls from "node:tls";
import { slugify } from "transliteration";
import type { Config } from "../../config";
import { systemTimers, type Timers } from "../../platform/clock";
import { log } from "../../platform/log";
import { repeat } from "../../platform/repeat";
import { registrableDomain } from "../brand/domain";
import { type EnrichableCatalog, EnrichmentService, recolorMono, WEB_SOURCE } from "../enrichment";
import type {
  BimiCheck,
  DiscoveredAsset,
  DiscoveryRecord,
  DiscoveryStore,
  EnrichmentStore,
} from "../enrichment-port";
import { provenanceOf, readOverHttp, type WebChannel, webSource } from "../provenance";
import { hasArtwork } from "../service";
import { type Brand, type StoredSvg, VARIANTS, type Variant } from "../types";
import { Refused } from "./address";
import { type Artwork, MIN_RASTER_SIDE, rasterSide, sha256 } from "./artwork";
import { ArtworkPool } from "./artwork-pool";
import {
  BIMI_PEM_MAX_BYTES,
  BIMI_SVG_MAX_BYTES,
  type BimiRecord,
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
import {
  FetchError,
  type FetchResult,
  GuardedFetcher,
  HTML_MAX_BYTES,
  IMAGE_MAX_BYTES,
  type Validators,
} from "./fetcher";
import { markRoots, pemCertificates, verifyMark } from "./mark";
import type { X509Certificate } from "./x509";

export const DOMAIN_BUDGET_MS = 15_000;
export const RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often the refresh schedule looks for due domains. */
export const REFRESH_TICK_MS = 60_000;
const HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
const IMAGE_ACCEPT = "image/svg+xml,image/png,image/webp,image/*;q=0.8";
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
  /** a found domain is checked again about this many days later (jittered); 0: never */
  refreshDays?: number;
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

/** A domain's BIMI logo (null when unusable) and the record of its checks. */
type BimiResult = { found: Found | null; check: BimiCheck };

/** One logo candidate of an attempt and what became of it. */
export interface TrailEntry {
  origin: string;
  /** the URL, or the page URL with #inline-svg */
  url: string;
  score: number;
  /** "color", "mono", "wordmark" when chosen, else why it lost */
  outcome: string;
}

type Found = {
  artwork: Artwork;
  asset: Omit<DiscoveredAsset, "variant" | "provenance"> & { provenance: WebChannel };
};

/** The sha256 of each variant, in a fixed order (artwork compared across records). */
const artworkHashes = (r: DiscoveryRecord): Partial<Record<Variant, string>> =>
  Object.fromEntries(
    VARIANTS.filter((v) => r.variants[v]).map((v) => [v, (r.variants[v] as StoredSvg).sha256]),
  );
const sameArtwork = (a: DiscoveryRecord, b: DiscoveryRecord) =>
  JSON.stringify(artworkHashes(a)) === JSON.stringify(artworkHashes(b));

/** The channel a URL was read over: plain http is marked as such. */
const channelOf = (url: string): WebChannel =>
  url.startsWith("http:") ? "website-http" : "website";

/** A response's validators, for a later conditional GET (absent when it sent none). */
const validatorsOf = (r: FetchResult) => ({
  ...(r.etag ? { etag: r.etag } : {}),
  ...(r.lastModified ? { lastModified: r.lastModified } : {}),
});

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
  /** trust anchors of BIMI mark certificates (the bundled roots, DISCOVERY_VMC_ROOTS) */
  vmcRoots: X509Certificate[] = markRoots();
  /** the service's clock (epoch ms): record times, retries, refreshes, certificate validity */
  now: () => number = Date.now;
  private refreshTimer: ReturnType<typeof setInterval> | null = null;
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
        if (this.now() - at < RETRY_AFTER_MS) this.attempted.set(r.domain, at);
      }
    }
  }

  private isoNow() {
    return new Date(this.now()).toISOString();
  }

  /**
   * When a found record is checked again: a day later when its artwork is all low-resolution
   * or was read over plain http (a better or https answer replaces it), else after
   * `refreshDays` ±20% (a stable jitter per domain and time, so instances agree and checks
   * spread out); null when refreshing is off.
   */
  private refreshAt(r: DiscoveryRecord): string | null {
    const at = Date.parse(r.at);
    if (lowResOnly(r) || r.assets.some((a) => a.provenance === "website-http"))
      return new Date(at + RETRY_AFTER_MS).toISOString();
    const days = this.options.refreshDays ?? 0;
    if (days <= 0) return null;
    const u = Number.parseInt(sha256(`${r.domain} ${r.at}`).slice(0, 8), 16) / 0x1_0000_0000;
    return new Date(at + days * DAY_MS * (0.8 + 0.4 * u)).toISOString();
  }

  /** Whether a found record is due to be checked again. */
  private refreshDue(r: DiscoveryRecord): boolean {
    if (r.refreshAt) return this.now() >= Date.parse(r.refreshAt);
    // a record stored before refreshAt was recorded: low-resolution artwork a day on, any
    // other after refreshDays
    const age = this.now() - Date.parse(r.at);
    return lowResOnly(r) ? age >= RETRY_AFTER_MS : age >= this.staleAfterMs();
  }

  /** Age after which a found record without refreshAt is due (never when refreshing is off). */
  private staleAfterMs(): number {
    const days = this.options.refreshDays ?? 0;
    return days > 0 ? days * DAY_MS : Number.POSITIVE_INFINITY;
  }

  /**
   * Queue the found domains whose check is due, at most `limit` (default: one per worker) and
   * only while the queue is at most half full, so demand always has room: the refresh runs
   * within the discovery budget (same workers, caps and per-domain time). Answers how many
   * were queued.
   */
  async refreshDueDomains(limit = this.options.workers): Promise<number> {
    if (!this.options.enabled || this.closed) return 0;
    const room = Math.min(limit, Math.floor(this.options.queueSize / 2) - this.queue.length);
    if (room <= 0) return 0;
    let queued = 0;
    const stale = this.now() - this.staleAfterMs();
    const staleBefore = Number.isFinite(stale) ? new Date(stale).toISOString() : "";
    const due = await this.store.discoveriesDue(
      this.isoNow(),
      staleBefore,
      room + this.pending.size,
    );
    for (const r of due)
      if (queued < room && this.enqueue({ domain: r.domain, brandId: r.brandId })) queued++;
    return queued;
  }

  /** Look for due domains every `ms` (the service; the admin CLI does not). */
  startRefresh(ms = REFRESH_TICK_MS) {
    if (!this.options.enabled || this.refreshTimer) return;
    this.refreshTimer = repeat(ms, () => this.refreshDueDomains(), "discovery refresh failed");
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
    if (!this.options.enabled || (hasArtwork(b) && !lowResArtwork(b) && !readOverHttp(b)))
      return false;
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
    // found: fetched again when its check is due; taken down: never
    if (known) return known.status === "found" && this.refreshDue(known);
    const at = this.attempted.get(domain);
    return at === undefined || this.now() - at >= RETRY_AFTER_MS;
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
    return this.waitForDomain(registrableDomain(host), ms);
  }

  /** As waitFor, for the domain a catalog brand is discovered on (DiscoveryService.domainOf). */
  waitForBrand(b: Brand, ms: number): Promise<boolean> {
    return this.waitForDomain(DiscoveryService.domainOf(b), ms);
  }

  /** Whether a discovery of the brand's domain is queued or running. */
  pendingFor(b: Brand): boolean {
    const domain = DiscoveryService.domainOf(b);
    return domain !== null && this.pending.has(domain);
  }

  private waitForDomain(domain: string | null, ms: number): Promise<boolean> {
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
    if (this.refreshTimer) clearInterval(this.refreshTimer);
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
  async takedown(host: string, by?: string): Promise<DiscoveryRecord> {
    const domain = domainOfInput(host);
    const previous = await this.store.discovery(domain);
    if (previous?.status === "taken_down") return previous;
    const record: DiscoveryRecord = {
      ...(previous ?? emptyRecord(domain, null)),
      status: "taken_down",
      at: this.isoNow(),
      reason: "taken down by an operator",
      variants: {},
      ...(by ? { by } : {}),
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
      const fresh = this.now() - Date.parse(stored.at) < RETRY_AFTER_MS;
      if (stored.status === "found" ? !this.refreshDue(stored) : fresh) {
        if (stored.status === "found") this.enrichment.applyDiscovery(stored);
        else this.attempted.set(job.domain, Date.parse(stored.at));
        return stored;
      }
    }
    const previous = stored?.status === "found" ? stored : null;
    // a due check first asks whether anything changed (conditional GETs); an operator's
    // rediscovery always reads the site
    const unchanged = previous && !force ? await this.unchanged(previous) : false;
    const attempted = unchanged ? null : await this.attempt(job);
    if (attempted) this.counts[attempted.status as keyof DiscoveryStats]++;
    const saved = await this.store.saveDiscovery(this.outcome(previous, attempted));
    if (saved.status === "found") {
      this.attempted.delete(job.domain);
      this.enrichment.applyDiscovery(saved);
    } else if (saved.status !== "taken_down") this.attempted.set(job.domain, this.now());
    log("info", "discovery finished", {
      domain: job.domain,
      status: saved.status,
      reason: saved.reason,
      slug: saved.slug,
      ...(saved.change ? { change: saved.change } : {}),
    });
    return saved;
  }

  /**
   * The record to store after an attempt (null: a check found nothing changed), given the
   * domain's found record before it: new or other artwork replaces the old (its hashes are
   * kept in `previous`); an attempt that finds nothing keeps what was found and notes when it
   * tried.
   */
  private outcome(previous: DiscoveryRecord | null, attempted: DiscoveryRecord | null) {
    const at = attempted?.at ?? this.isoNow();
    if (previous && attempted?.status !== "found") {
      const kept: DiscoveryRecord = { ...previous, at, change: "unchanged" };
      delete kept.previous;
      // nothing found this time: try again in a day
      kept.refreshAt = new Date(Date.parse(at) + RETRY_AFTER_MS).toISOString();
      return attempted ? kept : this.withRefresh(kept);
    }
    if (attempted?.status !== "found") return attempted as DiscoveryRecord;
    const record: DiscoveryRecord = { ...attempted, change: "new" };
    if (previous) {
      record.change = sameArtwork(previous, attempted) ? "unchanged" : "replaced";
      if (record.change === "replaced") record.previous = artworkHashes(previous);
      const pinned = this.pinnedVariants(attempted.brandId);
      if (pinned.length) record.pinned = pinned;
    }
    return this.withRefresh(record);
  }

  private withRefresh(r: DiscoveryRecord): DiscoveryRecord {
    const next = this.refreshAt(r);
    const out = { ...r };
    if (next) out.refreshAt = next;
    else delete out.refreshAt;
    return out;
  }

  /** The variants of a brand an operator's pin holds (read through the pin overlay). */
  private pinnedVariants(brandId: number | null): Variant[] {
    const b = brandId === null ? undefined : this.catalog.brandById(brandId);
    return b ? VARIANTS.filter((v) => provenanceOf(b, v) === "pin") : [];
  }

  /**
   * Whether a due check finds the domain as it was, asking only conditional GETs: the home page
   * (https) and every stored asset answer 304 to their ETag / Last-Modified, the BIMI record
   * names the same URLs, and a verified mark's certificate is still valid. Anything else
   * (a 200, no validators to ask with, an error) answers false and the site is read again.
   */
  private async unchanged(previous: DiscoveryRecord): Promise<boolean> {
    const page = previous.pageUrl;
    if (!page?.startsWith("https:") || !previous.pageValidators) return false;
    const deadline = Date.now() + (this.options.budgetMs ?? DOMAIN_BUDGET_MS);
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
  private async attempt(job: Job): Promise<DiscoveryRecord> {
    const at = () => this.isoNow();
    // the domain's owner, whichever brand asked and wherever the home page redirects
    const brand =
      job.brandId === null ? null : (this.ownerOf(job.domain) ?? this.brandById(job.brandId));
    const base = { ...emptyRecord(job.domain, brand?.id ?? null), at: at() };
    const deadline = Date.now() + (this.options.budgetMs ?? DOMAIN_BUDGET_MS);
    // BIMI is looked up while the home page loads, and used even when the page fails
    const bimiLookup = this.bimi(job.domain, deadline, job.trail);
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
      const art = await this.artwork(
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
    const svg = this.storedArt(found);
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
   * The domain's BIMI record, its logo and its mark certificate: the SVG the record names
   * (https, at most 32 KB, SVG Tiny PS-like: square viewBox, no script) and, when the record
   * names a certificate, every check of mark.ts at the service's clock. Null without a record;
   * a record whose logo is unusable gives no artwork and says why (`check.unusable`); an
   * address the SSRF rules refuse refuses the domain, as for any candidate.
   */
  private async bimi(
    domain: string,
    deadline: number,
    trail?: TrailEntry[],
  ): Promise<BimiResult | null> {
    if (!this.txt) return null;
    let record: BimiRecord | null;
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
    const check: BimiCheck = {
      logo: record.logo,
      certificate: record.certificate,
      verifiedMark: false,
      failed: [],
    };
    const get = (url: string, maxBytes: number, accept: string) =>
      this.fetcher.get(url, { maxBytes, deadline, accept });
    let svg: FetchResult;
    let artwork: Artwork;
    try {
      if (!record.logo.startsWith("https://")) throw new Error("l= is not an https URL");
      svg = await get(record.logo, BIMI_SVG_MAX_BYTES, "image/svg+xml");
      if (svg.status !== 200) throw new Error(`HTTP ${svg.status}`);
      const text = svg.body.toString("utf8");
      const problem = tinyPsProblem(text);
      if (problem) throw new Error(problem);
      artwork = await this.artworkPool.process({
        kind: "svg",
        text,
        idPrefix: `w${sha256(record.logo).slice(0, 6)}`,
        forceMono: false,
      });
    } catch (err) {
      if (err instanceof Refused) throw err;
      entry.outcome = `failed: ${(err as Error).message}`;
      return { found: null, check: { ...check, unusable: (err as Error).message } };
    }
    if (record.certificate) {
      try {
        if (!record.certificate.startsWith("https://")) throw new Error("a= is not an https URL");
        const pem = await get(record.certificate, BIMI_PEM_MAX_BYTES, "application/x-pem-file");
        if (pem.status !== 200) throw new Error(`HTTP ${pem.status}`);
        const verdict = await verifyMark(pem.body.toString("utf8"), {
          domain,
          svg: svg.body,
          now: new Date(this.now()),
          roots: this.vmcRoots,
        });
        Object.assign(check, {
          verifiedMark: verdict.verified,
          failed: verdict.failed,
          organization: verdict.organization,
          notAfter: verdict.notAfter,
        });
      } catch (err) {
        if (err instanceof Refused) throw err;
        check.failed = [{ check: "certificate", reason: `not fetched: ${(err as Error).message}` }];
      }
    }
    const c: Candidate = {
      origin: "bimi",
      score: CANDIDATE_SCORES.bimi,
      url: record.logo,
      declared: 0,
    };
    const asset = this.asset(c, svg.url, this.isoNow(), sha256(svg.body), artwork, svg);
    return {
      found: {
        artwork,
        asset: {
          ...asset,
          provenance: check.verifiedMark ? "bimi-verified" : "bimi",
          ...(record.certificate ? { verifiedMark: check.verifiedMark } : {}),
        },
      },
      check,
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
   * single-colour SVG the mono mark. The BIMI logo (a square tile with its background) becomes
   * the icon, and the colour artwork only when the site has none. `trail` gets every
   * candidate's outcome.
   */
  private async artwork(
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
      variants[variant] = this.storedArt(f);
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
  private storedArt(f: Found): StoredSvg {
    const a = f.artwork;
    return {
      svg: a.svg,
      sha256: sha256(a.svg),
      source: webSource(f.asset.provenance, a.kind === "raster" ? a : undefined),
    };
  }

  private async candidate(c: Candidate, pageUrl: string, deadline: number): Promise<Found> {
    const fetchedAt = this.isoNow();
    const prefix = `w${sha256(c.url ?? pageUrl).slice(0, 6)}`;
    if (c.svg !== undefined) {
      const artwork = await this.artworkPool.process({
        kind: "svg",
        text: c.svg,
        idPrefix: prefix,
        forceMono: false,
      });
      const url = `${pageUrl}#inline-svg`;
      return { artwork, asset: this.asset(c, url, fetchedAt, sha256(c.svg), artwork) };
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
    return { artwork, asset: this.asset(c, r.url, fetchedAt, sha256(r.body), artwork, r) };
  }

  /**
   * An image by URL. A site whose home page was read over plain http (its https port refused
   * the connection) gets its https image URLs tried over http when their https port refuses
   * too; never after a TLS error, a reset or a timeout.
   */
  private async image(url: string, pageUrl: string, deadline: number) {
    const opts = { maxBytes: IMAGE_MAX_BYTES, deadline, accept: IMAGE_ACCEPT };
    try {
      return await this.fetcher.get(url, opts);
    } catch (err) {
      const insecurePage = pageUrl.startsWith("http:") && url.startsWith("https:");
      if (!insecurePage || !(err instanceof FetchError) || err.code !== "port_closed") throw err;
      return this.fetcher.get(`http:${url.slice("https:".length)}`, opts);
    }
  }

  /** Where found artwork came from; its channel from the URL it was read over. */
  private asset(
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
    | "DISCOVERY_VMC_ROOTS"
    | "DISCOVERY_REFRESH_DAYS"
    | "DISCOVERY_WORKERS"
    | "DISCOVERY_QUEUE"
    | "PUBLIC_URL"
  >,
  store: DiscoveryStore,
  enrichment: EnrichmentService,
  catalog: DiscoveryCatalog,
  artworkPool: ArtworkPool,
  trust = discoveryTrust(config),
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
    ...(trust.ca ? { ca: trust.ca } : {}),
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
      refreshDays: config.DISCOVERY_REFRESH_DAYS,
    },
    artworkPool,
  );
  service.vmcRoots = trust.vmcRoots;
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
 * What discovery trusts besides the system: DISCOVERY_CA_FILE's CAs for https, and the mark
 * certificate roots for BIMI (bundled, plus DISCOVERY_VMC_ROOTS). Read first, so a bad file
 * stops the start before anything else is started.
 */
export function discoveryTrust(config: Pick<Config, "DISCOVERY_CA_FILE" | "DISCOVERY_VMC_ROOTS">): {
  ca?: string[];
  vmcRoots: X509Certificate[];
} {
  return {
    ...(config.DISCOVERY_CA_FILE ? { ca: trustedCas(config.DISCOVERY_CA_FILE) } : {}),
    vmcRoots: markRoots(config.DISCOVERY_VMC_ROOTS ? vmcRootsPem(config.DISCOVERY_VMC_ROOTS) : ""),
  };
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

/** The PEM text of DISCOVERY_VMC_ROOTS; a file that cannot be read, or holds no certificate, stops the start. */
function vmcRootsPem(file: string): string {
  const pem = readFileSync(file, "utf8");
  if (!pemCertificates(pem).length)
    throw new Error(`DISCOVERY_VMC_ROOTS ${file} holds no PEM certificate`);
  return pem;
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
  const trust = discoveryTrust(config);
  const artworkPool = new ArtworkPool();
  const enrichment = new EnrichmentService(store, catalog);
  enrichment.useDeriver((b) => artworkPool.derive(b));
  enrichment.useDiscoveries(store);
  await enrichment.start();
  const discovery = createDiscovery(config, store, enrichment, catalog, artworkPool, trust);
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
