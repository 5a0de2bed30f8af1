/**
 * Both usage store adapters for contract tests: the embedded one always, the MongoDB one against
 * MONGODB_URL or the run's FerretDB (tests/support/mongo.ts), with its reason to skip.
 */
import { rmSync } from "node:fs";
import { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import type { UsageEventStore } from "../../src/usage/port";
import { mongoUrl, skipNote, testDbName } from "./mongo";
import { tempDir } from "./temp";

export interface OpenedUsageStore {
  store: UsageEventStore;
  /** another store on the same data (a second process; embedded: a restart after close) */
  reopen(): Promise<UsageEventStore>;
  drop(): Promise<void>;
}

export interface UsageStoreKind {
  name: string;
  /** the reason it cannot run here (tests/support/skip.ts); none: it runs */
  skip?: string;
  open(): Promise<OpenedUsageStore>;
}

export async function usageStoreKinds(): Promise<UsageStoreKind[]> {
  const mongo = await mongoUrl();
  return [
    {
      name: "embedded",
      async open() {
        const dir = tempDir("usage-a-");
        return {
          store: EmbeddedUsageStore.open(dir),
          reopen: async () => EmbeddedUsageStore.open(dir),
          drop: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: `mongodb ${skipNote(mongo)}`.trim(),
      skip: mongo.reason,
      async open() {
        const { MongoClient } = await import("mongodb");
        const { MongoUsageStore } = await import("../../src/store/mongo/usage");
        const client = new MongoClient(mongo.url as string, { serverSelectionTimeoutMS: 5000 });
        await client.connect();
        const db = client.db(testDbName("bapi_usage_an"));
        await MongoUsageStore.ensureIndexes(db);
        return {
          store: new MongoUsageStore(db),
          reopen: async () => new MongoUsageStore(db),
          drop: async () => {
            await db.dropDatabase();
            await client.close();
          },
        };
      },
    },
  ];
}
