import { afterAll, beforeAll, describe } from "bun:test";
import { join } from "node:path";
import type { Db, MongoClient } from "mongodb";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { mongoUrl, skipNote, testDbName } from "./mongo";
import { describeUnless } from "./skip";
import { tempDir } from "./temp";

/** How a port's adapters are built on each database, as src/deps.ts builds them. */
export interface Adapters<P> {
  /** on the embedded SQLite database of a fresh DATA_DIR */
  embedded(db: Database, dataDir: string): P | Promise<P>;
  /** on a fresh MongoDB database (its indexes ensured as at start) */
  mongo(db: Db, dataDir: string): Promise<P>;
}

const mongo = await mongoUrl();

/**
 * One contract for a storage port, run on both of its adapters: the embedded one always, the
 * MongoDB one against MONGODB_URL or the run's FerretDB (tests/support/mongo.ts). `contract`
 * declares the tests; `get()` gives the adapter under test (built once per suite).
 */
export function portContract<P>(
  port: string,
  adapters: Adapters<P>,
  contract: (get: () => Promise<P>, kind: "embedded" | "mongodb") => void,
): void {
  describe(`${port} store contract: embedded`, () => {
    let db: Database | undefined;
    let adapter: Promise<P> | undefined;
    const get = () => {
      adapter ??= (async () => {
        const dir = tempDir();
        db = new Database(join(dir, DB_FILE));
        return adapters.embedded(db, dir);
      })();
      return adapter;
    };
    afterAll(() => db?.close());
    contract(get, "embedded");
  });

  describeUnless(mongo.reason)(`${port} store contract: mongodb ${skipNote(mongo)}`.trim(), () => {
    let client: MongoClient | undefined;
    let name: string | undefined;
    let adapter: Promise<P> | undefined;
    const get = () => {
      adapter ??= (async () => {
        const { MongoClient } = await import("mongodb");
        client = await MongoClient.connect(mongo.url as string);
        name = testDbName();
        return adapters.mongo(client.db(name), tempDir());
      })();
      return adapter;
    };
    // the first call connects (and may seed): outside the tests' own time
    beforeAll(get, 120_000);
    afterAll(async () => {
      if (name) await client?.db(name).dropDatabase();
      await client?.close();
    });
    contract(get, "mongodb");
  });
}
