/**
 * The wiring: the one place where adapters are chosen from the configuration (embedded or
 * MongoDB store, in-memory or Upstash counters, SMTP or the outbox, Stripe or no billing) and
 * the services are built on them. Controllers and services never choose an adapter themselves.
 */
import { dirname, join } from "node:path";
import { AuthService } from "./accounts/auth";
import { AccessTokens, jwtSettings } from "./accounts/jwt";
import { type MailSender, OutboxMailer, SmtpMailer } from "./accounts/mail";
import { AccountService } from "./accounts/service";
import { loadPrerendered } from "./assets/prerender";
import { RenderCache } from "./assets/render-cache";
import { createRenderer } from "./assets/render-pool";
import { AssetService } from "./assets/service";
import { BillingService } from "./billing/service";
import { BrandResolver } from "./catalog/brand/service";
import { type DiscoveryService, startEnrichment } from "./catalog/discovery/service";
import type { EnrichmentService } from "./catalog/enrichment";
import { SearchIndex } from "./catalog/search/service";
import { CatalogService } from "./catalog/service";
import { TransactionMatcher } from "./catalog/transactions/service";
import type { Config } from "./config";
import { Drain } from "./http/drain";
import { PublishableKeys } from "./images/publishable";
import { ImageSigner, SERVER_SECRET_NAME } from "./images/service";
import { passwords } from "./platform/password";
import { CircuitBreaker } from "./quota/circuit-breaker";
import type { Principal } from "./quota/principal";
import type { RateLimiter } from "./quota/rate-limit";
import type { QuotaService } from "./quota/service";
import { createCounterStore, createQuotas } from "./quota/setup";
import { CorrectionsService } from "./reports/service";
import { openStore, type Store } from "./store";
import { projectCounters } from "./usage/counters";
import type { UsageRecorder } from "./usage/port";
import { startRetention } from "./usage/retention";
import { BatchingRecorder, type WriterStats } from "./usage/writer";
import { VisitorCounter } from "./visitor-counter/service";

/** How often an instance reads discovery records stored elsewhere. */
const DISCOVERY_POLL_MS = 15_000;

/** Everything the HTTP layer needs, wired to adapters. Tests build their own. */
export interface Deps {
  config: Config;
  store: Store;
  catalog: CatalogService;
  /** search index and domain map over the catalog; background enrichment of brands */
  search: SearchIndex;
  brands: BrandResolver;
  /** card-statement descriptors to brands (GET /v1/brand?transaction=, POST /v1/transactions) */
  transactions: TransactionMatcher;
  enrichment: EnrichmentService;
  /** web logo discovery (DISCOVERY*): queued by lookups of unknown domains and artwork-less brands */
  discovery: DiscoveryService;
  /** users' reports, operators' pins (laid over the catalog) and the audit trail */
  corrections: CorrectionsService;
  accounts: AccountService;
  /** daily quotas (the metered macro's QuotaGate), usage counts, carry-over, rebuild */
  quota: QuotaService;
  /** short-window caps (RATE_LIMITS), same counter store */
  limiter: RateLimiter;
  usage: UsageRecorder;
  /** the usage recorder's counts, for GET /metrics */
  usageStats: () => WriterStats;
  /** logo delivery: variant resolution, render worker pool, render cache (RENDER_CACHE_MB) */
  assets: AssetService;
  verifyBearer?: (token: string) => Promise<Principal | null>;
  /** Stripe checkout, portal and webhooks (STRIPE_*) */
  billing: BillingService;
  /** signed image URLs (/i/): per-key signing secrets */
  signer: ImageSigner;
  /** publishable keys on /i/: origin allow-lists and own daily caps */
  publishable: PublishableKeys;
  /** the public visitor counter (VISITOR_COUNTER_*) */
  visitors: VisitorCounter;
  /** /auth: self-service accounts, access tokens (JWT), outgoing mail */
  auth: AuthService;
  access: AccessTokens;
  mail: MailSender;
  /** the shutdown state: /readyz and every answer follow it (src/http/drain.ts) */
  drain: Drain;
  /** release resources (flush buffers, close connections) */
  close(): Promise<void>;
}

/** The catalog in memory, its search index and domain map, and the background enrichment. */
async function catalogParts(config: Config, s: Store) {
  const catalog = new CatalogService(s.catalog);
  await catalog.load();
  // their svgo, resvg and sharp work runs in one background Worker
  const background = await startEnrichment(config, s.enrichment, catalog);
  // records stored by other instances and the admin CLI
  background.enrichment.watchDiscoveries(DISCOVERY_POLL_MS);
  // found domains checked again when due (DISCOVERY_REFRESH_DAYS)
  background.discovery.startRefresh();
  const brands = new BrandResolver(catalog);
  // pins laid over the catalog's brands and domains; pins set elsewhere are read on a poll
  const corrections = new CorrectionsService({
    store: s.corrections,
    catalog,
    brands,
    fetcher: background.discovery.fetcher,
    discover: (domain) => background.discovery.requestDomain(domain),
  });
  await corrections.start();
  corrections.watch(DISCOVERY_POLL_MS);
  const transactions = new TransactionMatcher(catalog, brands);
  return {
    catalog,
    background,
    search: new SearchIndex(catalog),
    brands,
    transactions,
    corrections,
  };
}

/**
 * Metering: the daily quotas and short-window caps on the counter store, the usage event
 * recorder, the counters rebuilt from the log, and the retention sweep.
 */
async function meteringParts(config: Config, s: Store, accounts: AccountService) {
  const { quota, limiter } = createQuotas(createCounterStore(config), {
    timeoutMs: config.COUNTER_TIMEOUT_MS,
  });
  const recorder = new BatchingRecorder(s.usage, {
    flushMs: config.USAGE_FLUSH_MS,
    flushEvents: config.USAGE_FLUSH_EVENTS,
    spillDir: join(config.DATA_DIR, "spill"),
    onFull: config.USAGE_ON_STORE_FULL,
    durability: config.USAGE_DURABILITY,
    reserveBytes: config.USAGE_SPILL_RESERVE_MB * 1024 * 1024,
  });
  const usage: UsageRecorder = recorder;
  await projectCounters(quota, usage, s.usage, accounts);
  // a regenerated key starts the day with the counts of the keys it replaced
  accounts.onKeyRegenerated((k) => quota.carryOver(k.previous, k.keyId));
  const retention = startRetention(s.usage, config.USAGE_RETENTION_DAYS);
  return { quota, limiter, usage, usageStats: () => recorder.stats(), retention };
}

/** Billing on Stripe when STRIPE_* are set; the stripe package is loaded only then (cold start). */
async function billingService(config: Config, s: Store, accounts: AccountService) {
  const stripe =
    config.STRIPE_SECRET_KEY || config.STRIPE_WEBHOOK_SECRET
      ? await import("./billing/stripe")
      : null;
  return new BillingService({
    accounts,
    store: s.billing,
    provider:
      stripe && config.STRIPE_SECRET_KEY
        ? new stripe.StripeBilling({
            secretKey: config.STRIPE_SECRET_KEY,
            pricePro: config.STRIPE_PRICE_PRO ?? "",
            apiBase: config.STRIPE_API_BASE,
          })
        : null,
    verifier:
      stripe && config.STRIPE_WEBHOOK_SECRET
        ? new stripe.StripeWebhookVerifier(config.STRIPE_WEBHOOK_SECRET)
        : null,
    publicUrl: publicUrl(config),
  });
}

/** Self-service accounts: access tokens (JWT), outgoing mail (SMTP or the outbox), /auth. */
async function accountParts(
  config: Config,
  s: Store,
  accounts: AccountService,
  limiter: RateLimiter,
) {
  const access = await AccessTokens.create(
    await jwtSettings(config, (name) => s.accounts.serverSecret(name)),
  );
  const mail: MailSender = config.SMTP_URL
    ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM)
    : new OutboxMailer(join(config.DATA_DIR, "outbox"), config.MAIL_FROM);
  const auth = new AuthService({
    accounts,
    store: s.accounts,
    tokens: s.tokens,
    access,
    passwords,
    mail,
    limiter,
    publicUrl: publicUrl(config),
    upgradeUrl: config.UPGRADE_URL,
  });
  return { access, mail, auth };
}

const publicUrl = (config: Config) => config.PUBLIC_URL ?? `http://localhost:${config.PORT}`;

/** The one place where adapters are chosen and the services wired to them. */
export async function buildDeps(config: Config, store?: Store): Promise<Deps> {
  const s = store ?? (await openStore(config));
  const { catalog, background, search, brands, transactions, corrections } = await catalogParts(
    config,
    s,
  );
  const { enrichment, discovery } = background;
  const accounts = new AccountService(s.accounts, config.KEY_CACHE_TTL_MS);
  const { quota, limiter, usage, usageStats, retention } = await meteringParts(config, s, accounts);
  const assets = new AssetService(
    catalog,
    createRenderer({ maxWaitMs: config.RENDER_QUEUE_MS, timeoutMs: config.RENDER_TIMEOUT_MS }),
    new RenderCache(config.RENDER_CACHE_MB * 1024 * 1024),
    loadPrerendered(join(dirname(config.CATALOG_FILE), "prerender")),
  );
  assets.onMissingArtwork = (b) => discovery.requestBrand(b);
  const billing = await billingService(config, s, accounts);
  const visitors = new VisitorCounter(
    s.visitors,
    quota.store,
    quota.store.remote ? new CircuitBreaker({ timeoutMs: config.COUNTER_TIMEOUT_MS }) : null,
  );
  const { access, mail, auth } = await accountParts(config, s, accounts, limiter);
  return {
    config,
    signer: new ImageSigner(accounts, () => s.accounts.serverSecret(SERVER_SECRET_NAME)),
    publishable: new PublishableKeys(accounts, limiter, config.UPGRADE_URL),
    store: s,
    catalog,
    search,
    brands,
    transactions,
    enrichment,
    discovery,
    corrections,
    accounts,
    quota,
    limiter,
    usage,
    usageStats,
    assets,
    billing,
    visitors,
    auth,
    access,
    mail,
    verifyBearer: (token) => auth.verifyBearer(token),
    drain: new Drain(),
    async close() {
      // reset and verification mails still being prepared go out first
      await auth.settled();
      if (mail instanceof SmtpMailer) mail.close();
      await retention.stop();
      await assets.close();
      // a catalog build being recorded finishes before the catalog and the store close
      corrections.stop();
      await corrections.settled();
      catalog.close();
      await background.close();
      await usage.close();
      await quota.close();
      await s.close();
    },
  };
}
