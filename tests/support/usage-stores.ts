/**
 * Both usage log adapters for contract tests: the embedded one always, the MongoDB one against
 * MONGODB_URL or the run's FerretDB (tests/support/mongo.ts), with its reason to skip.
 */
import { rmSync } from "node:fs";
import { EmbeddedUsageLog } from "../../src/usage/log/embedded";
import type { UsageLog } from "../../src/usage/log/port";
import { mongoUrl, skipNote, testDbName } from "./mongo";
import { tempDir } from "./temp";

export interface OpenedLog {
  log: UsageLog;
  /** another log on the same data (a second process; embedded: a restart after close) */
  reopen(): Promise<UsageLog>;
  drop(): Promise<void>;
}

export interface UsageLogKind {
  name: string;
  /** the reason it cannot run here (tests/support/skip.ts); none: it runs */
  skip?: string;
  open(opts?: { now?: () => number }): Promise<OpenedLog>;
}

export async function usageLogKinds(): Promise<UsageLogKind[]> {
  const mongo = await mongoUrl();
  return [
    {
      name: "embedded",
      async open(opts = {}) {
        const dir = tempDir("usage-a-");
        const log = EmbeddedUsageLog.open(dir, opts);
        const opened: UsageLog[] = [log];
        return {
          log,
          reopen: async () => {
            const again = EmbeddedUsageLog.open(dir, opts);
            opened.push(again);
            return again;
          },
          drop: async () => {
            for (const l of opened) await l.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    },
    {
      name: `mongodb ${skipNote(mongo)}`.trim(),
      skip: mongo.reason,
      async open(opts = {}) {
        const { MongoClient } = await import("mongodb");
        const { MongoUsageLog } = await import("../../src/usage/log/mongo");
        const client = new MongoClient(mongo.url as string, { serverSelectionTimeoutMS: 5000 });
        await client.connect();
        const db = client.db(testDbName("bapi_usage_log"));
        await MongoUsageLog.ensureIndexes(db);
        const make = () => new MongoUsageLog(db, { projectEveryMs: 50, ...opts });
        const log = make();
        const opened: UsageLog[] = [log];
        return {
          log,
          reopen: async () => {
            const again = make();
            opened.push(again);
            return again;
          },
          drop: async () => {
            for (const l of opened) await l.close();
            await db.dropDatabase();
            await client.close();
          },
        };
      },
    },
  ];
}
