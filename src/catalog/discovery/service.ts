/**
 * Web logo discovery: reads a brand's own website for its logo, name and colour, in the
 * background, and hands what it found to the enrichment service (EnrichmentService
 * .applyDiscovery), which stores nothing itself but applies the record to the catalog and
 * derives dark/light variants and colour roles as for any brand.
 *
 * Jobs: one per registrable domain, queued by lookups of unknown domains and of brands without
 * artwork (`requestBrand`, `requestDomain`) and by the refresh schedule (`refreshDueDomains`),
 * at most `queueSize` waiting (a full queue drops and counts the request) and `workers` running
 * (queue.ts). A domain is attempted at most once a day unless an operator asks
 * (`discover(..., { force: true })`); a found domain is checked again when its `refreshAt`
 * comes (conditional GETs first; records.ts); a taken-down domain never is. One attempt is
 * pipeline.ts; every job's outbound traffic goes through GuardedFetcher. Record times, retry and
 * refresh decisions and a mark certificate's validity use the service's clock (`now`). Wired
 * from the configuration in setup.ts.
 */
import { log } from "../../platform/log";
import { repeat } from "../../platform/repeat";
import { registrableDomain } from "../brand/domain";
import { type Brand, VARIANTS, type Variant } from "../built-catalog";
import type { EnrichmentService } from "../enrichment/service";
import { provenanceOf, readOverHttp } from "../provenance";
import { hasArtwork } from "../service";
import { MIN_RASTER_SIDE, rasterSide } from "./artwork";
import type { TrailEntry } from "./artwork-choice";
import { ArtworkPool } from "./artwork-pool";
import type { TxtResolver } from "./bimi";
import type { GuardedFetcher } from "./fetcher";
import { type DiscoveryCatalog, type Job, SiteReader } from "./pipeline";
import { JobQueue } from "./queue";
import { domainOfInput, RETRY_AFTER_MS, RefreshSchedule, takenDown } from "./records";
import type { DiscoveryRecord, DiscoveryStore } from "./store/port";
import type { X509Certificate } from "./x509";

/** How often the refresh schedule looks for due domains. */
export const REFRESH_TICK_MS = 60_000;

export interface DiscoveryOptions {
  enabled: boolean;
  workers: number;
  queueSize: number;
  budgetMs?: number;
  /** a found domain is checked again about this many days later (jittered); 0: never */
  refreshDays?: number;
}

/** How an attempt can end (a takedown is no attempt). */
type AttemptOutcome = "found" | "nothing" | "refused" | "failed";

export interface DiscoveryStats {
  queued: number;
  running: number;
  dropped: number;
  found: number;
  nothing: number;
  refused: number;
  failed: number;
}

/** A brand whose colour artwork is a discovered raster under MIN_RASTER_SIDE. */
function lowResArtwork(b: Brand): boolean {
  const side = b.variants.color ? rasterSide(b.variants.color.source) : null;
  return side !== null && side < MIN_RASTER_SIDE;
}

/**
 * Discovery's jobs and records: what is queued (queue.ts) and when (the refresh schedule,
 * records.ts), what one attempt finds (pipeline.ts), what is stored and applied to the
 * catalog, and the operators' discover, list and takedown.
 */
export class DiscoveryService {
  private jobs: JobQueue<Job>;
  private reader: SiteReader;
  private schedule: RefreshSchedule;
  /** domain -> epoch ms of its last attempt that found nothing, failed or was refused */
  private attempted = new Map<string, number>();
  private refreshTimer: ReturnType<typeof setInterval> | null = null;
  private counts: Record<AttemptOutcome, number> = { found: 0, nothing: 0, refused: 0, failed: 0 };
  private closed = false;

  constructor(
    private store: DiscoveryStore,
    private enrichment: EnrichmentService,
    private catalog: DiscoveryCatalog,
    readonly fetcher: GuardedFetcher,
    private options: DiscoveryOptions,
    /** svgo, resvg and sharp off the request thread (shared with enrichment; its owner stops it) */
    artworkPool: ArtworkPool = new ArtworkPool(),
  ) {
    this.reader = new SiteReader({ catalog, fetcher, artworkPool, budgetMs: options.budgetMs });
    this.schedule = new RefreshSchedule(options.refreshDays ?? 0);
    this.jobs = new JobQueue((job) => this.run(job, false), {
      workers: options.workers,
      size: options.queueSize,
    });
  }

  /** TXT lookups for BIMI records (system DNS or DoH); null: BIMI is not tried */
  get txt(): TxtResolver | null {
    return this.reader.txt;
  }
  set txt(resolver: TxtResolver | null) {
    this.reader.txt = resolver;
  }

  /** trust anchors of BIMI mark certificates (the bundled roots, DISCOVERY_VMC_ROOTS) */
  get vmcRoots(): X509Certificate[] {
    return this.reader.vmcRoots;
  }
  set vmcRoots(roots: X509Certificate[]) {
    this.reader.vmcRoots = roots;
  }

  /** the service's clock (epoch ms): record times, retries, refreshes, certificate validity */
  get now(): () => number {
    return this.reader.now;
  }
  set now(clock: () => number) {
    this.reader.now = clock;
  }

  /** the timers `waitFor` ends its waits with (a test moves its own) */
  get timers() {
    return this.jobs.timers;
  }
  set timers(timers) {
    this.jobs.timers = timers;
  }

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
   * Queue the found domains whose check is due, at most `limit` (default: one per worker) and
   * only while the queue is at most half full, so demand always has room: the refresh runs
   * within the discovery budget (same workers, caps and per-domain time). Answers how many
   * were queued.
   */
  async refreshDueDomains(limit = this.options.workers): Promise<number> {
    if (!this.options.enabled || this.closed) return 0;
    const room = Math.min(limit, Math.floor(this.options.queueSize / 2) - this.jobs.queued);
    if (room <= 0) return 0;
    let queued = 0;
    const stale = this.now() - this.schedule.staleAfterMs();
    const staleBefore = Number.isFinite(stale) ? new Date(stale).toISOString() : "";
    const due = await this.store.discoveriesDue(
      this.isoNow(),
      staleBefore,
      room + this.jobs.domains,
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
    return {
      ...this.counts,
      queued: this.jobs.queued,
      running: this.jobs.running,
      dropped: this.jobs.dropped,
    };
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
    if (known) return known.status === "found" && this.schedule.due(known, this.now());
    const at = this.attempted.get(domain);
    return at === undefined || this.now() - at >= RETRY_AFTER_MS;
  }

  private enqueue(job: Job): boolean {
    try {
      if (!this.options.enabled || this.jobs.has(job.domain) || !this.due(job.domain)) return false;
      return this.jobs.add(job);
    } catch (err) {
      log("warn", "discovery request failed", { domain: job.domain, error: String(err) });
      return false;
    }
  }

  /**
   * Waits at most `ms` for the queued or running job of `host`'s registrable domain: true
   * when it ended (its result is applied to the catalog), false when it did not in time or
   * none is queued. A promise on the job: no thread or worker is held.
   */
  waitFor(host: string, ms: number): Promise<boolean> {
    return this.jobs.waitFor(registrableDomain(host), ms);
  }

  /** As waitFor, for the domain a catalog brand is discovered on (DiscoveryService.domainOf). */
  waitForBrand(b: Brand, ms: number): Promise<boolean> {
    return this.jobs.waitFor(DiscoveryService.domainOf(b), ms);
  }

  /** Whether a discovery of the brand's domain is queued or running. */
  pendingFor(b: Brand): boolean {
    const domain = DiscoveryService.domainOf(b);
    return domain !== null && this.jobs.has(domain);
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    return this.jobs.idle();
  }

  async close() {
    this.closed = true;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    await this.jobs.close();
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
    const brand = this.reader.ownerOf(domain);
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
    const saved = await this.store.saveDiscovery(takenDown(previous, domain, this.isoNow(), by));
    this.enrichment.applyDiscovery(saved);
    return saved;
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
      if (stored.status === "found" ? !this.schedule.due(stored, this.now()) : fresh) {
        if (stored.status === "found") this.enrichment.applyDiscovery(stored);
        else this.attempted.set(job.domain, Date.parse(stored.at));
        return stored;
      }
    }
    const previous = stored?.status === "found" ? stored : null;
    // a due check first asks whether anything changed (conditional GETs); an operator's
    // rediscovery always reads the site
    const unchanged = previous && !force ? await this.reader.unchanged(previous) : false;
    const attempted = unchanged ? null : await this.reader.attempt(job);
    if (attempted) this.counts[attempted.status as AttemptOutcome]++;
    const pinned = attempted ? this.pinnedVariants(attempted.brandId) : [];
    const saved = await this.store.saveDiscovery(
      this.schedule.outcome(previous, attempted, this.isoNow(), pinned),
    );
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

  /** The variants of a brand an operator's pin holds (read through the pin overlay). */
  private pinnedVariants(brandId: number | null): Variant[] {
    const b = brandId === null ? undefined : this.catalog.brandById(brandId);
    return b ? VARIANTS.filter((v) => provenanceOf(b, v) === "pin") : [];
  }
}
