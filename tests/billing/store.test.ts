import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { BillingLink } from "../../src/billing/port";
import { openEmbeddedStore, openMongoStore, type Store } from "../../src/store";
import { CATALOG_FILE, tempDir } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless } from "../support/skip";
import { sid } from "./util";

// each test builds an app or starts a server: allow for a loaded machine
setDefaultTimeout(30_000);

/**
 * One contract for the billing-link and visitor-counter stores of both adapters. The embedded
 * adapter always runs; the MongoDB adapter on the run's wire server (tests/support/mongo.ts).
 */
function billingStoreContract(name: string, open: () => Promise<Store>, skip?: string) {
  describeUnless(skip)(`billing and visitor stores: ${name}`, () => {
    let store: Store;
    const get = async () => {
      store ??= await open();
      return store;
    };
    afterAll(async () => {
      await store?.close();
    });
    const link = (
      accountId: string,
      customerId: string,
      subscriptionId: string | null,
    ): BillingLink => ({
      accountId,
      customerId,
      subscriptionId,
      updatedAt: new Date().toISOString(),
    });

    test("links are found by account and by customer, and replaced per account", async () => {
      const { billing } = await get();
      const acct = sid("acct");
      const c1 = sid("cus");
      expect(await billing.byAccount(acct)).toBeNull();
      await billing.saveLink(link(acct, c1, null));
      expect(await billing.byAccount(acct)).toMatchObject({
        accountId: acct,
        customerId: c1,
        subscriptionId: null,
      });
      expect((await billing.byCustomer(c1))?.accountId).toBe(acct);
      const c2 = sid("cus");
      const sub = sid("sub");
      await billing.saveLink(link(acct, c2, sub));
      expect(await billing.byAccount(acct)).toMatchObject({ customerId: c2, subscriptionId: sub });
      expect(await billing.byCustomer(c1)).toBeNull();
      expect((await billing.byCustomer(c2))?.accountId).toBe(acct);
    });

    test("an event id is claimed once; a released claim can be claimed again", async () => {
      const { billing } = await get();
      const id = sid("evt");
      expect(await billing.claimEvent(id)).toBe(true);
      expect(await billing.claimEvent(id)).toBe(false);
      await billing.releaseEvent(id);
      expect(await billing.claimEvent(id)).toBe(true);
      const [x, y] = await Promise.all([billing.claimEvent(sid("evt")), billing.claimEvent(id)]);
      expect([x, y]).toEqual([true, false]);
    });

    test("a subscription only moves forward in event time", async () => {
      const { billing } = await get();
      const sub = sid("sub");
      expect(await billing.advanceSubscription(sub, 100)).toBe(true);
      expect(await billing.advanceSubscription(sub, 200)).toBe(true);
      expect(await billing.advanceSubscription(sub, 200)).toBe(true); // same second: in order
      expect(await billing.advanceSubscription(sub, 150)).toBe(false);
      expect(await billing.advanceSubscription(sid("sub"), 1)).toBe(true);
    });

    test("visitor total counts up and the secret is made once", async () => {
      const { visitors } = await get();
      const start = await visitors.total();
      expect(await visitors.increment()).toBe(start + 1);
      expect(await visitors.increment()).toBe(start + 2);
      expect(await visitors.total()).toBe(start + 2);
      const secret = await visitors.secret();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(await visitors.secret()).toBe(secret);
    });
  });
}

billingStoreContract("embedded", async () =>
  openEmbeddedStore({ DATA_DIR: tempDir(), CATALOG_FILE }),
);

const mongo = await mongoUrl();
billingStoreContract(
  `mongodb ${skipNote(mongo)}`.trim(),
  () =>
    openMongoStore(
      { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: testDbName("bapi_billing") },
      mongo.url as string,
    ),
  mongo.reason,
);

describe("embedded billing store after a restart", () => {
  test("links, event ids, subscription times and the visitor total are replayed", async () => {
    const dir = tempDir();
    const s1 = openEmbeddedStore({ DATA_DIR: dir, CATALOG_FILE });
    await s1.billing.saveLink({
      accountId: "a1",
      customerId: "cus_1",
      subscriptionId: "sub_1",
      updatedAt: "2026-01-01T00:00:00Z",
    });
    await s1.billing.claimEvent("evt_1");
    await s1.billing.claimEvent("evt_2");
    await s1.billing.releaseEvent("evt_2");
    await s1.billing.advanceSubscription("sub_1", 500);
    await s1.visitors.increment();
    const secret = await s1.visitors.secret();
    await s1.close();
    const s2 = openEmbeddedStore({ DATA_DIR: dir, CATALOG_FILE });
    expect((await s2.billing.byCustomer("cus_1"))?.accountId).toBe("a1");
    expect(await s2.billing.claimEvent("evt_1")).toBe(false);
    expect(await s2.billing.claimEvent("evt_2")).toBe(true);
    expect(await s2.billing.advanceSubscription("sub_1", 400)).toBe(false);
    expect(await s2.visitors.total()).toBe(1);
    expect(await s2.visitors.secret()).toBe(secret);
    await s2.close();
  });
});
