/**
 * The wiring: the one place where adapters are chosen from the configuration (embedded or
 * MongoDB store, in-memory or Upstash counters, SMTP or the outbox, Stripe or no billing) and
 * the services are built on them. Controllers and services never choose an adapter themselves.
 */

import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AuthService } from "./accounts/auth";
import { AccessTokens, jwtSettings } from "./accounts/jwt";
import { type MailSender, OutboxMailer, SmtpMailer } from "./accounts/mail";
import { AccountService } from "./accounts/service";
import { EmbeddedAccountStore } from "./accounts/store/embedded";
import { EmbeddedTokenStore } from "./accounts/store/embedded-tokens";
import type { AccountStore, TokenStore } from "./accounts/store/port";
import { loadPrerendered } from "./assets/prerender";
import { RenderCache } from "./assets/render-cache";
import { createRenderer } from "./assets/render-pool";
import { AssetService } from "./assets/service";
import { BillingService } from "./billing/service";
import { EmbeddedBillingStore } from "./billing/store/embedded";
import type { BillingStore } from "./billing/store/port";
import { BrandResolver } from "./catalog/brand/service";
import type { DiscoveryService } from "./catalog/discovery/service";
import { startEnrichment } from "./catalog/discovery/setup";
import { EmbeddedDiscoveryStore } from "./catalog/discovery/store/embedded";
import type { DiscoveryStore } from "./catalog/discovery/store/port";
import type { EnrichmentService } from "./catalog/enrichment/service";
import { EmbeddedEnrichmentStore } from "./catalog/enrichment/store/embedded";
import type { EnrichmentStore } from "./catalog/enrichment/store/port";
import { SearchIndex } from "./catalog/search/service";
import { CatalogService } from "./catalog/service";
import { FileCatalogSource } from "./catalog/store/embedded";
import type { CatalogSource } from "./catalog/store/port";
import { TransactionMatcher } from "./catalog/transactions/service";
import type { Config } from "./config";
import { Drain } from "./http/drain";
import { PublishableKeys } from "./images/publishable";
import { ImageSigner, SERVER_SECRET_NAME } from "./images/service";
import { log } from "./platform/log";
import { passwords } from "./platform/password";
import { CircuitBreaker } from "./quota/circuit-breaker";
import type { Principal } from "./quota/principal";
import type { RateLimiter } from "./quota/rate-limit";
import type { QuotaService } from "./quota/service";
import { createCounterStore, createQuotas } from "./quota/setup";
import { auditedDiscoveries } from "./reports/audit";
import { CorrectionsService } from "./reports/service";
import { EmbeddedCorrectionsStore } from "./reports/store/embedded";
import type { CorrectionsStore } from "./reports/store/port";
import { Database, DB_FILE } from "./store/embedded/db";
import { importLegacyFiles } from "./store/embedded/legacy-import";
import { lockDataDir } from "./store/lock";
import { projectCounters } from "./usage/counters";
import { EmbeddedUsageLog } from "./usage/log/embedded";
import type { UsageLog } from "./usage/log/port";
import { LogRecorder, type RecorderStats, type UsageRecorder } from "./usage/log/recorder";
import { startRetention } from "./usage/retention";
import { VisitorCounter } from "./visitor-counter/service";
import { EmbeddedVisitorStore } from "./visitor-counter/store/embedded";
import type { VisitorCountStore } from "./visitor-counter/store/port";

/** The storage ports a running service needs, behind one of two adapters. */
export interface Store {
  kind: "embedded" | "mongodb";
  accounts: AccountStore;
  /** refresh, verification and reset tokens (hashed) */
  tokens: TokenStore;
  catalog: CatalogSource;
  /** results of background brand enrichment (catalog/enrichment/service.ts) */
  enrichment: EnrichmentStore;
  /** results of web logo discovery, one record per domain (catalog/discovery/) */
  discoveries: DiscoveryStore;
  /** the usage event log and its projections (src/usage/log/) */
  usage: UsageLog;
  /** account <-> Stripe customer/subscription links, applied webhook events */
  billing: BillingStore;
  /** the public visitor counter's total */
  visitors: VisitorCountStore;
  /** users' reports, operators' pins and the audit trail of brand changes */
  corrections: CorrectionsStore;
  /** the embedded store's SQLite database (absent on MongoDB) */
  db?: Database;
  /** true when the backing store answers */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export function openEmbeddedStore(
  config: Pick<Config, "DATA_DIR" | "CATALOG_FILE"> &
    Partial<Pick<Config, "USAGE_DURABILITY" | "USAGE_HOURLY_DAYS">>,
): Store {
  const db = new Database(join(config.DATA_DIR, DB_FILE));
  const accounts = new EmbeddedAccountStore(db);
  const tokens = new EmbeddedTokenStore(db);
  const enrichment = new EmbeddedEnrichmentStore(db);
  const discoveries = new EmbeddedDiscoveryStore(db);
  const billing = new EmbeddedBillingStore(db);
  const visitors = new EmbeddedVisitorStore(db);
  const corrections = new EmbeddedCorrectionsStore(db);
  importLegacyFiles(db, config.DATA_DIR, {
    accounts,
    tokens,
    billing,
    enrichment,
    discoveries,
    visitors,
  });
  // strict durability: each batch's commit is on disk before its append resolves; earlier
  // layouts of the log are moved once, here, before anything is served
  const usage = new EmbeddedUsageLog(db, {
    migrateFrom: config.DATA_DIR,
    durable: config.USAGE_DURABILITY === "strict",
    hourlyDays: config.USAGE_HOURLY_DAYS,
  });
  return {
    kind: "embedded",
    accounts,
    tokens,
    catalog: new FileCatalogSource(config.CATALOG_FILE),
    enrichment,
    discoveries: auditedDiscoveries(discoveries, corrections),
    usage,
    billing,
    visitors,
    corrections,
    db,
    ping: async () => {
      try {
        db.get("SELECT 1 FROM sqlite_schema LIMIT 1");
        return true;
      } catch {
        return false;
      }
    },
    close: async () => {
      await usage.close();
      db.close();
    },
  };
}

/** MongoDB store (official driver, loaded only when MONGODB_URL is set). Seeds the catalog. */
export async function openMongoStore(
  config: Pick<Config, "CATALOG_FILE" | "MONGODB_DB"> &
    Partial<Pick<Config, "USAGE_RETENTION_DAYS" | "USAGE_HOURLY_DAYS" | "DATA_DIR">>,
  url: string,
): Promise<Store> {
  const { MongoClient } = await import("mongodb");
  const { MongoAccountStore, MongoTokenStore } = await import("./accounts/store/mongo");
  const { MongoCatalogSource } = await import("./catalog/store/mongo");
  const { MongoEnrichmentStore } = await import("./catalog/enrichment/store/mongo");
  const { MongoDiscoveryStore } = await import("./catalog/discovery/store/mongo");
  const { MongoUsageLog } = await import("./usage/log/mongo");
  const { migrateMongo } = await import("./usage/log/mongo-migrate");
  const { MongoBillingStore } = await import("./billing/store/mongo");
  const { MongoVisitorStore } = await import("./visitor-counter/store/mongo");
  const { MongoCorrectionsStore } = await import("./reports/store/mongo");
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const db = client.db(config.MONGODB_DB);
  await MongoAccountStore.ensureIndexes(db);
  await MongoCatalogSource.ensureIndexes(db);
  await MongoUsageLog.ensureIndexes(db, { retentionDays: config.USAGE_RETENTION_DAYS });
  await MongoBillingStore.ensureIndexes(db);
  await MongoDiscoveryStore.ensureIndexes(db);
  await MongoCorrectionsStore.ensureIndexes(db);
  // this instance's local catalog database of MongoDB's catalog version
  const catalog = new MongoCatalogSource(
    db,
    join(config.DATA_DIR ?? join(tmpdir(), `bapi-${config.MONGODB_DB}`), "catalog-cache"),
  );
  try {
    const built = await new FileCatalogSource(config.CATALOG_FILE).load();
    if (await catalog.seed(built))
      log("info", "seeded MongoDB catalog", { version: built.version });
  } catch (err) {
    log("warn", "catalog file not available for seeding; using MongoDB's catalog", {
      reason: (err as Error).message,
    });
  }
  const usage = new MongoUsageLog(db, { hourlyDays: config.USAGE_HOURLY_DAYS });
  // earlier layouts of the log are moved once, under the projector's lease (no other instance
  // counts meanwhile)
  await migrateMongo(db, usage);
  const corrections = new MongoCorrectionsStore(db);
  return {
    kind: "mongodb",
    accounts: new MongoAccountStore(db),
    tokens: new MongoTokenStore(db),
    catalog,
    enrichment: new MongoEnrichmentStore(db),
    discoveries: auditedDiscoveries(new MongoDiscoveryStore(db), corrections),
    usage,
    billing: new MongoBillingStore(db),
    visitors: new MongoVisitorStore(db),
    corrections,
    ping: async () => {
      try {
        await db.command({ ping: 1 });
        return true;
      } catch {
        return false;
      }
    },
    close: async () => {
      await usage.close(); // stops its projector and hands its lease back
      await client.close();
    },
  };
}

export function openStore(config: Config): Promise<Store> {
  return config.MONGODB_URL
    ? openMongoStore(config, config.MONGODB_URL)
    : Promise.resolve(openEmbeddedStore(config));
}

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
  usageStats: () => RecorderStats;
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
  /** replay the usage spill files an earlier process left (called once the service listens) */
  startReplay(): void;
  /** release resources (flush buffers, close connections) */
  close(): Promise<void>;
}

/** The catalog in memory, its search index and domain map, and the background enrichment. */
async function catalogParts(config: Config, s: Store) {
  const catalog = new CatalogService(s.catalog);
  await catalog.load();
  // their svgo, resvg and sharp work runs in one background Worker
  const background = await startEnrichment(config, s, catalog);
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
 * recorder (one per DATA_DIR: `lockDataDir`), the counters seeded from the log's daily tally
 * and the spill files, and the retention sweep. Spill files an earlier process left are
 * replayed in the background once the service is ready (`startReplay`).
 */
async function meteringParts(config: Config, s: Store, accounts: AccountService) {
  const lock = lockDataDir(config.DATA_DIR);
  const { quota, limiter } = createQuotas(createCounterStore(config), {
    timeoutMs: config.COUNTER_TIMEOUT_MS,
  });
  const spillDir = join(config.DATA_DIR, "spill");
  const recorder = new LogRecorder(s.usage, {
    flushMs: config.USAGE_FLUSH_MS,
    flushEvents: config.USAGE_FLUSH_EVENTS,
    spillDir,
    onFull: config.USAGE_ON_STORE_FULL,
    durability: config.USAGE_DURABILITY,
    reserveBytes: config.USAGE_SPILL_RESERVE_MB * 1024 * 1024,
    spillMaxBytes: config.USAGE_SPILL_MAX_MB * 1024 * 1024,
    replay: "later",
  });
  await projectCounters(quota, s.usage, accounts, spillDir);
  // a regenerated key starts the day with the counts of the keys it replaced
  accounts.onKeyRegenerated((k) => quota.carryOver(k.previous, k.keyId));
  const retention = startRetention(
    s.usage,
    config.USAGE_RETENTION_DAYS,
    undefined,
    config.USAGE_HOURLY_DAYS,
  );
  return { quota, limiter, recorder, lock, retention };
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
  const { quota, limiter, recorder, lock, retention } = await meteringParts(config, s, accounts);
  const usage: UsageRecorder = recorder;
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
    usageStats: () => recorder.stats(),
    startReplay: () => recorder.startReplay(),
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
      await recorder.close();
      await quota.close();
      await s.close();
      lock.release();
    },
  };
}
