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
import { slugify } from "transliteration";
import type { Config } from "../../config";
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
import { type Artwork, rasterSource, sha256 } from "./artwork";
import { ArtworkPool } from "./artwork-pool";
import { applyManifest, type Candidate, extractPage, type PageFacts } from "./extract";
import { FetchError, GuardedFetcher, HTML_MAX_BYTES, IMAGE_MAX_BYTES } from "./fetcher";

export const DOMAIN_BUDGET_MS = 15_000;
export const RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/** Most logo candidates fetched per domain. */
const MAX_CANDIDATES = 6;
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
}

export class DiscoveryService {
  private queue: Job[] = [];
  private pending = new Set<string>();
  private running = 0;
  /** domain -> epoch ms of its last attempt that found nothing, failed or was refused */
  private attempted = new Map<string, number>();
  private waiters: (() => void)[] = [];
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

  /** The website domain to discover a catalog brand on (its first registrable domain). */
  static domainOf(b: Brand): string | null {
    const website = b.links?.website;
    const hosts = [...b.domains];
    if (website) {
      try {
        hosts.unshift(new URL(website).hostname);
      } catch {}
    }
    for (const h of hosts) {
      const d = registrableDomain(h.replace(/^www\./, ""));
      if (d) return d;
    }
    return null;
  }

  /** Queue discovery for a catalog brand without artwork. Never throws; true when queued. */
  requestBrand(b: Brand): boolean {
    if (!this.options.enabled || hasArtwork(b)) return false;
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
    if (this.enrichment.discoveryOf(domain)) return false; // found or taken down
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
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0)
            for (const w of this.waiters.splice(0)) w();
        });
    }
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  async close() {
    this.closed = true;
    this.queue.length = 0;
    this.pending.clear();
    await this.idle();
  }

  /**
   * Discover one domain now (operators: CLI, admin routes) and apply the result. `force`
   * fetches again even when the domain was tried today or already found; a takedown is final.
   */
  async discover(host: string, opts: { force?: boolean } = {}): Promise<DiscoveryRecord> {
    const domain = domainOfInput(host);
    const brand = this.brandOfDomain(domain);
    return this.run({ domain, brandId: brand?.id ?? null }, opts.force ?? false);
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

  private brandOfDomain(domain: string): Brand | null {
    return this.catalog.brandByHost(domain) ?? null;
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
      if (stored.status === "found" || fresh) {
        if (stored.status === "found") this.enrichment.applyDiscovery(stored);
        else this.attempted.set(job.domain, Date.parse(stored.at));
        return stored;
      }
    }
    const record = await this.attempt(job);
    this.counts[record.status as keyof DiscoveryStats]++;
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
    const base = emptyRecord(job.domain, job.brandId);
    const deadline = Date.now() + (this.options.budgetMs ?? DOMAIN_BUDGET_MS);
    try {
      const page = await this.fetcher.homepage(job.domain, {
        maxBytes: HTML_MAX_BYTES,
        deadline,
        accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
      });
      base.pageUrl = page.url;
      const finalDomain = registrableDomain(new URL(page.url).hostname);
      if (finalDomain && finalDomain !== job.domain) base.aliases = [finalDomain];
      if (page.status !== 200)
        return { ...base, at: at(), reason: `home page answered HTTP ${page.status}` };
      if (!/html|xml|^$/.test(page.contentType))
        return { ...base, at: at(), reason: `home page is ${page.contentType}` };
      let facts = extractPage(page.body.toString("utf8"), page.url, job.domain);
      if (facts.noBrand) return { ...base, at: at(), reason: facts.noBrand };
      if (facts.manifestUrl) facts = await this.withManifest(facts, facts.manifestUrl, deadline);
      const brand = job.brandId === null ? null : this.brandById(job.brandId);
      if (!brand && !facts.name) return { ...base, at: at(), reason: "the site names no brand" };
      const art = await this.artwork(facts.candidates, page.url, deadline);
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

  /** Candidates best first: the first usable colour artwork, and a mono mark when one shows. */
  private async artwork(candidates: Candidate[], pageUrl: string, deadline: number) {
    type Found = { artwork: Artwork; asset: Omit<DiscoveredAsset, "variant"> };
    let color: Found | null = null;
    let mono: Found | null = null;
    let reason: string | null = null;
    let tried = 0;
    for (const c of candidates) {
      if (color || tried >= MAX_CANDIDATES || Date.now() >= deadline) break;
      if (c.origin === "mask-icon" && mono) continue;
      tried++;
      try {
        const found = await this.candidate(c, pageUrl, deadline);
        if (c.origin === "mask-icon") mono = found;
        else {
          color = found;
          if (found.artwork.single && !mono) mono = found;
        }
      } catch (err) {
        if (err instanceof Refused) throw err;
        reason = `${c.origin}: ${(err as Error).message}`;
      }
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
  const fetcher = new GuardedFetcher({
    userAgent: discoveryUserAgent(config.PUBLIC_URL),
    proxy: config.DISCOVERY_PROXY ?? null,
    allowLoopback: config.DISCOVERY_ALLOW_PRIVATE,
  });
  return new DiscoveryService(
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
