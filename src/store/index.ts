import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedAccountStore } from "../accounts/store/embedded";
import { EmbeddedTokenStore } from "../accounts/store/embedded-tokens";
import type { AccountStore, TokenStore } from "../accounts/store/port";
import { EmbeddedBillingStore } from "../billing/store/embedded";
import type { BillingStore } from "../billing/store/port";
import { EmbeddedDiscoveryStore } from "../catalog/discovery/store/embedded";
import type { DiscoveryStore } from "../catalog/discovery/store/port";
import { EmbeddedEnrichmentStore } from "../catalog/enrichment/store/embedded";
import type { EnrichmentStore } from "../catalog/enrichment/store/port";
import { FileCatalogSource } from "../catalog/store/embedded";
import type { CatalogSource } from "../catalog/store/port";
import type { Config } from "../config";
import { log } from "../platform/log";
import { auditedDiscoveries } from "../reports/audit";
import { EmbeddedCorrectionsStore } from "../reports/store/embedded";
import type { CorrectionsStore } from "../reports/store/port";
import type { UsageEventStore } from "../usage/port";
import { EmbeddedVisitorStore } from "../visitor-counter/store/embedded";
import type { VisitorCountStore } from "../visitor-counter/store/port";
import { Database, DB_FILE } from "./embedded/db";
import { importLegacyFiles } from "./embedded/legacy-import";
import { EmbeddedUsageStore } from "./embedded/usage";

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
  /** usage event log + usage_daily projection */
  usage: UsageEventStore;
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
  config: Pick<Config, "DATA_DIR" | "CATALOG_FILE"> & Partial<Pick<Config, "USAGE_DURABILITY">>,
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
  // strict durability: each batch's commit is on disk before its append resolves
  const usage = new EmbeddedUsageStore(db, {
    importFrom: config.DATA_DIR,
    durable: config.USAGE_DURABILITY === "strict",
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
    Partial<Pick<Config, "USAGE_RETENTION_DAYS" | "DATA_DIR">>,
  url: string,
): Promise<Store> {
  const { MongoClient } = await import("mongodb");
  const { MongoAccountStore, MongoTokenStore } = await import("../accounts/store/mongo");
  const { MongoCatalogSource } = await import("../catalog/store/mongo");
  const { MongoEnrichmentStore } = await import("../catalog/enrichment/store/mongo");
  const { MongoDiscoveryStore } = await import("../catalog/discovery/store/mongo");
  const { MongoUsageStore } = await import("./mongo/usage");
  const { MongoBillingStore } = await import("../billing/store/mongo");
  const { MongoVisitorStore } = await import("../visitor-counter/store/mongo");
  const { MongoCorrectionsStore } = await import("../reports/store/mongo");
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const db = client.db(config.MONGODB_DB);
  await MongoAccountStore.ensureIndexes(db);
  await MongoCatalogSource.ensureIndexes(db);
  await MongoUsageStore.ensureIndexes(db, { retentionDays: config.USAGE_RETENTION_DAYS });
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
  const usage = new MongoUsageStore(db);
  await usage.migrateCells();
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
      await usage.close(); // stops its recovery passes
      await client.close();
    },
  };
}

export function openStore(config: Config): Promise<Store> {
  return config.MONGODB_URL
    ? openMongoStore(config, config.MONGODB_URL)
    : Promise.resolve(openEmbeddedStore(config));
}
