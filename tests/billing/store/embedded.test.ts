/**
 * The embedded billing store where its contract does not reach: two connections on one
 * DATA_DIR (the service and the admin CLI are two processes), and what a restart finds.
 */
import { afterEach, expect, test } from "bun:test";
import { EmbeddedBillingStore } from "../../../src/billing/store/embedded";
import type { Database } from "../../../src/store/embedded/db";
import { tempDir } from "../../support/app";
import { closeConnections, connections } from "../../support/db";

afterEach(closeConnections);

test("two connections: a billing event is claimed once, a subscription moves forward once, a customer names the last link", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [ba, bb] = [new EmbeddedBillingStore(a), new EmbeddedBillingStore(b)];
  expect([await ba.claimEvent("evt_1"), await bb.claimEvent("evt_1")]).toEqual([true, false]);
  await bb.releaseEvent("evt_1");
  expect(await ba.claimEvent("evt_1")).toBe(true);
  expect(await ba.advanceSubscription("sub_1", 20)).toBe(true);
  expect(await bb.advanceSubscription("sub_1", 10)).toBe(false);
  expect(await bb.advanceSubscription("sub_1", 20)).toBe(true);
  const link = { subscriptionId: null, updatedAt: "2026-01-01T00:00:00.000Z" };
  await ba.saveLink({ accountId: "acc1", customerId: "cus_1", ...link });
  await bb.saveLink({ accountId: "acc2", customerId: "cus_1", ...link });
  // a customer id names the account whose link was saved last, also across connections
  expect((await ba.byCustomer("cus_1"))?.accountId).toBe("acc2");
  await ba.saveLink({ accountId: "acc1", customerId: "cus_1", ...link });
  expect((await bb.byCustomer("cus_1"))?.accountId).toBe("acc1");
});

test("after a restart: links, event ids and subscription times are replayed", async () => {
  const dir = tempDir();
  const [first] = connections(1, dir) as [Database];
  const s1 = new EmbeddedBillingStore(first);
  await s1.saveLink({
    accountId: "a1",
    customerId: "cus_1",
    subscriptionId: "sub_1",
    updatedAt: "2026-01-01T00:00:00Z",
  });
  await s1.claimEvent("evt_1");
  await s1.claimEvent("evt_2");
  await s1.releaseEvent("evt_2");
  await s1.advanceSubscription("sub_1", 500);
  first.close();
  const [second] = connections(1, dir) as [Database];
  const s2 = new EmbeddedBillingStore(second);
  expect((await s2.byCustomer("cus_1"))?.accountId).toBe("a1");
  expect(await s2.claimEvent("evt_1")).toBe(false);
  expect(await s2.claimEvent("evt_2")).toBe(true);
  expect(await s2.advanceSubscription("sub_1", 400)).toBe(false);
});
