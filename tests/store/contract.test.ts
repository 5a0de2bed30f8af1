import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { AccountEvent } from "../../src/accounts/model";
import { newId } from "../../src/platform/ids";
import { openEmbeddedStore, openMongoStore, type Store } from "../../src/store";
import { CATALOG_FILE, tempDir } from "../helpers";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";

/**
 * One contract for every store adapter. The embedded adapter always runs; the MongoDB adapter
 * runs against MONGODB_URL or the run's FerretDB (tests/support/mongo.ts).
 */
function storeContract(name: string, open: () => Promise<Store>, skip = false) {
  describe.skipIf(skip)(`store contract: ${name}`, () => {
    let store: Store;
    const get = async () => {
      store ??= await open();
      return store;
    };
    // opening seeds the catalog (a few seconds on the wire server)
    beforeAll(get, 120_000);
    afterAll(async () => {
      await store?.close();
    });

    const registered = (accountId: string): AccountEvent => ({
      id: newId(),
      accountId,
      ts: new Date().toISOString(),
      type: "account.registered",
      data: { email: "a@b.test", tier: "free", limits: null },
    });

    test("appends events and projects the account", async () => {
      const s = await get();
      const accountId = newId();
      const keyEvent: AccountEvent = {
        id: newId(),
        accountId,
        ts: new Date().toISOString(),
        type: "key.issued",
        data: {
          keyId: newId().replaceAll("-", "").slice(0, 16),
          hash: "ab".repeat(32),
          prefix: "bak_x",
        },
      };
      await s.accounts.append([registered(accountId), keyEvent]);
      const account = await s.accounts.getAccount(accountId);
      expect(account).toMatchObject({ id: accountId, tier: "free", email: "a@b.test", version: 2 });
      expect(account?.keys).toHaveLength(1);
      const byKey = await s.accounts.findByKeyId(
        (keyEvent as { data: { keyId: string } }).data.keyId,
      );
      expect(byKey?.id).toBe(accountId);
      expect((await s.accounts.events(accountId)).map((e) => e.type)).toEqual([
        "account.registered",
        "key.issued",
      ]);
    });

    test("appending the same event twice is idempotent", async () => {
      const s = await get();
      const accountId = newId();
      const e = registered(accountId);
      await s.accounts.append([e]);
      await s.accounts.append([e]);
      expect(await s.accounts.events(accountId)).toHaveLength(1);
      expect((await s.accounts.getAccount(accountId))?.version).toBe(1);
    });

    test("tier changes and revocations are projected", async () => {
      const s = await get();
      const accountId = newId();
      const keyId = "0123456789abcdef";
      const ts = new Date().toISOString();
      await s.accounts.append([
        registered(accountId),
        {
          id: newId(),
          accountId,
          ts,
          type: "key.issued",
          data: { keyId, hash: "cd".repeat(32), prefix: "p" },
        },
        {
          id: newId(),
          accountId,
          ts,
          type: "tier.changed",
          data: { tier: "enterprise", limits: { svg: 9 } },
        },
        { id: newId(), accountId, ts, type: "key.revoked", data: { keyId } },
      ]);
      const a = await s.accounts.getAccount(accountId);
      expect(a?.tier).toBe("enterprise");
      expect(a?.limits).toEqual({ svg: 9 });
      expect(a?.keys[0]?.revokedAt).toBe(ts);
    });

    test("unknown ids are null", async () => {
      const s = await get();
      expect(await s.accounts.getAccount("nope")).toBeNull();
      expect(await s.accounts.findByKeyId("ffffffffffffffff")).toBeNull();
    });

    test("serves the built catalog with its version", async () => {
      const s = await get();
      const built = await s.catalog.load();
      expect(built.brands.length).toBeGreaterThan(100);
      expect(await s.catalog.version()).toBe(built.version);
      const withSvg = built.brands.find((b) => b.variants.mono);
      expect(withSvg?.variants.mono?.svg).toContain("<svg");
    }, 60_000);

    test("is reachable", async () => {
      expect(await (await get()).ping()).toBe(true);
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

storeContract("embedded", async () => {
  const dir = tempDir();
  dirs.push(dir);
  return openEmbeddedStore({ DATA_DIR: dir, CATALOG_FILE });
});

const mongo = await mongoUrl();
const mongoDb = testDbName();
storeContract(
  `mongodb ${skipNote(mongo)}`.trim(),
  async () => {
    const store = await openMongoStore({ CATALOG_FILE, MONGODB_DB: mongoDb }, mongo.url as string);
    return { ...store, close: () => dropAndClose(mongo.url as string, mongoDb, store) };
  },
  !mongo.url,
);

/** Close the store and drop its test database. */
async function dropAndClose(url: string, db: string, store: Store) {
  const { MongoClient } = await import("mongodb");
  const client = await MongoClient.connect(url);
  await client.db(db).dropDatabase();
  await client.close();
  await store.close();
}
