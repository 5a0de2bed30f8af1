import { expect, test } from "bun:test";
import { openEmbeddedStore, openMongoStore, type Store } from "../src/deps";
import { CATALOG_FILE, tempDir } from "./support/app";
import { smallCatalogFile } from "./support/catalog";
import { mongoUrl, skipNote, testDbName } from "./support/mongo";
import { testIf } from "./support/skip";

/** The stores deps.ts opens: one adapter for every port, all on one database that answers. */
const PORTS = [
  "accounts",
  "tokens",
  "catalog",
  "enrichment",
  "discoveries",
  "usage",
  "billing",
  "visitors",
  "corrections",
] as const;

async function opensEveryPort(store: Store, kind: Store["kind"]) {
  try {
    expect(store.kind).toBe(kind);
    for (const port of PORTS)
      expect({ port, open: typeof store[port] }).toEqual({ port, open: "object" });
    expect(await store.ping()).toBe(true);
  } finally {
    await store.close();
  }
}

test("the embedded store: every port on one SQLite database, which answers", async () => {
  await opensEveryPort(openEmbeddedStore({ DATA_DIR: tempDir(), CATALOG_FILE }), "embedded");
});

const mongo = await mongoUrl();
testIf(mongo.reason === undefined, mongo.reason ?? "")(
  `the MongoDB store: every port on one database, which answers ${skipNote(mongo)}`.trim(),
  async () => {
    const name = testDbName();
    const store = await openMongoStore(
      { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: name, DATA_DIR: tempDir() },
      mongo.url as string,
    );
    const { MongoClient } = await import("mongodb");
    const client = await MongoClient.connect(mongo.url as string);
    try {
      await opensEveryPort(store, "mongodb");
    } finally {
      await client.db(name).dropDatabase();
      await client.close();
    }
  },
  120_000,
);
