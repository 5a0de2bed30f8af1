import { expect, test } from "bun:test";
import { EmbeddedBillingStore } from "../../../src/billing/store/embedded";
import { MongoBillingStore } from "../../../src/billing/store/mongo";
import type { BillingLink, BillingStore } from "../../../src/billing/store/port";
import { portContract } from "../../support/port-contract";
import { sid } from "../util";

/** The billing store's contract (links, claimed events, subscription times), on both adapters. */
portContract<BillingStore>(
  "billing",
  {
    embedded: (db) => new EmbeddedBillingStore(db),
    mongo: async (db) => {
      await MongoBillingStore.ensureIndexes(db);
      return new MongoBillingStore(db);
    },
  },
  (get) => {
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
      const billing = await get();
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
      const billing = await get();
      const id = sid("evt");
      expect(await billing.claimEvent(id)).toBe(true);
      expect(await billing.claimEvent(id)).toBe(false);
      await billing.releaseEvent(id);
      expect(await billing.claimEvent(id)).toBe(true);
      const [x, y] = await Promise.all([billing.claimEvent(sid("evt")), billing.claimEvent(id)]);
      expect([x, y]).toEqual([true, false]);
    });

    test("a subscription only moves forward in event time", async () => {
      const billing = await get();
      const sub = sid("sub");
      expect(await billing.advanceSubscription(sub, 100)).toBe(true);
      expect(await billing.advanceSubscription(sub, 200)).toBe(true);
      expect(await billing.advanceSubscription(sub, 200)).toBe(true); // same second: in order
      expect(await billing.advanceSubscription(sub, 150)).toBe(false);
      expect(await billing.advanceSubscription(sid("sub"), 1)).toBe(true);
    });
  },
);
