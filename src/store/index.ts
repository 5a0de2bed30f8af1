import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AccountStore, TokenStore } from "../accounts/port";
import type { BillingStore } from "../billing/port";
import type { DiscoveryStore, EnrichmentStore } from "../catalog/enrichment-port";
import type { CatalogSource } from "../catalog/port";
import type { Config } from "../config";
import { log } from "../platform/log";
import { auditedDiscoveries } from "../reports/audit";
import type { CorrectionsStore } from "../reports/port";
import { EmbeddedUsageLog } from "../usage/log/embedded";
import type { UsageLog } from "../usage/log/port";
import type { VisitorCountStore } from "../visitor-counter/port";
import { EmbeddedAccountStore } from "./embedded/accounts";
import { EmbeddedTokenStore } from "./embedded/accounts-tokens";
import { EmbeddedBillingStore } from "./embedded/billing";
import { FileCatalogSource } from "./embedded/catalog";
import { Database, DB_FILE } from "./embedded/db";
import { EmbeddedEnrichmentStore } from "./embedded/enrichment";
import { importLegacyFiles } from "./embedded/legacy-import";
import { EmbeddedCorrectionsStore } from "./embedded/reports";
import { EmbeddedVisitorStore } from "./embedded/visitors";

/** The storage ports a running service needs, behind one of two adapters. */
export interface Store {
  kind: "embedded" | "mongodb";
  accounts: AccountStore;
  /** refresh, verification and reset tokens (hashed) */
  tokens: TokenStore;
  catalog: CatalogSource;
  /** results of background brand enrichment and web logo discovery (catalog/enrichment.ts) */
  enrichment: EnrichmentStore & DiscoveryStore;
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
  const billing = new EmbeddedBillingStore(db);
  const visitors = new EmbeddedVisitorStore(db);
  const corrections = new EmbeddedCorrectionsStore(db);
  importLegacyFiles(db, config.DATA_DIR, { accounts, tokens, billing, enrichment, visitors });
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
    enrichment: auditedDiscoveries(enrichment, corrections),
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
  const { MongoAccountStore, MongoTokenStore } = await import("./mongo/accounts");
  const { MongoCatalogSource } = await import("./mongo/catalog");
  const { MongoEnrichmentStore } = await import("./mongo/enrichment");
  const { MongoUsageLog } = await import("../usage/log/mongo");
  const { migrateMongo } = await import("../usage/log/mongo-migrate");
  const { MongoBillingStore } = await import("./mongo/billing");
  const { MongoVisitorStore } = await import("./mongo/visitors");
  const { MongoCorrectionsStore } = await import("./mongo/reports");
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const db = client.db(config.MONGODB_DB);
  await MongoAccountStore.ensureIndexes(db);
  await MongoCatalogSource.ensureIndexes(db);
  await MongoUsageLog.ensureIndexes(db, { retentionDays: config.USAGE_RETENTION_DAYS });
  await MongoBillingStore.ensureIndexes(db);
  await MongoEnrichmentStore.ensureIndexes(db);
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
    enrichment: auditedDiscoveries(new MongoEnrichmentStore(db), corrections),
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
