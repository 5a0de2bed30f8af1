/**
 * The embedded adapters on the shared SQLite database, where the store contract does not reach:
 * two connections on one DATA_DIR (the service and the admin CLI are two processes), expired
 * tokens removed at open, and discovery polling across connections.
 */
import { afterEach, expect, setSystemTime, test } from "bun:test";
import type { AccountEvent } from "../../../src/accounts/model";
import { EmbeddedAccountStore } from "../../../src/accounts/store/embedded";
import { EmbeddedTokenStore } from "../../../src/accounts/store/embedded-tokens";
import type { TokenRecord } from "../../../src/accounts/store/port";
import { EmbeddedBillingStore } from "../../../src/billing/store/embedded";
import { emptyRecord } from "../../../src/catalog/discovery/service";
import { EmbeddedDiscoveryStore } from "../../../src/catalog/discovery/store/embedded";
import type { DiscoveryRecord } from "../../../src/catalog/discovery/store/port";
import { newId } from "../../../src/platform/ids";
import type { Database } from "../../../src/store/embedded/db";
import { EmbeddedVisitorStore } from "../../../src/visitor-counter/store/embedded";
import { tempDir } from "../../support/app";
import { openDatabase } from "../../support/db";

const open: Database[] = [];
/** `n` connections on one new DATA_DIR */
function connections(n: number, dir = tempDir()): Database[] {
  const dbs = Array.from({ length: n }, () => openDatabase(dir));
  open.push(...dbs);
  return dbs;
}
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

const token = (hash: string, expiresAt: number, family: string | null = null): TokenRecord => ({
  hash,
  kind: "refresh",
  accountId: "a",
  family,
  createdAt: 0,
  expiresAt,
  usedAt: null,
  revokedAt: null,
});

test("tokens: expired ones are deleted at open, live ones kept with their use", async () => {
  const dir = tempDir();
  const [db] = connections(1, dir) as [Database];
  let now = 1_000_000;
  const tokens = new EmbeddedTokenStore(db, () => now);
  for (let i = 0; i < 50; i++) await tokens.put(token(`h${i}`, now + 1000));
  await tokens.put(token("live", now + 10_000_000));
  expect(await tokens.use("live", now + 1)).toBe(true);
  // expired but not yet reopened: still readable (the service checks the expiry itself)
  now += 5000;
  expect(await tokens.get("h5")).not.toBeNull();
  const [again] = connections(1, dir) as [Database];
  const reopened = new EmbeddedTokenStore(again, () => now);
  expect(await reopened.get("h5")).toBeNull();
  expect(await reopened.get("live")).toMatchObject({ usedAt: 1_000_001 });
  const left = db.get<{ n: number }>("SELECT count(*) AS n FROM auth_tokens");
  expect(left?.n).toBe(1);
});

test("two connections: a token is used once, a billing event claimed once, a visitor counted once each", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [ta, tb] = [new EmbeddedTokenStore(a), new EmbeddedTokenStore(b)];
  await ta.put(token("t1", Date.now() + 60_000, "fam"));
  const uses = await Promise.all([ta.use("t1", 1), tb.use("t1", 2), ta.use("t1", 3)]);
  expect(uses.filter(Boolean)).toHaveLength(1);
  await tb.revokeFamily("fam", 9);
  expect((await ta.get("t1"))?.revokedAt).toBe(9);

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

  const [va, vb] = [new EmbeddedVisitorStore(a), new EmbeddedVisitorStore(b)];
  await Promise.all([va.increment(), vb.increment(), va.increment()]);
  expect(await vb.total()).toBe(3);
  expect(await va.secret()).toBe(await vb.secret());
});

test("two connections: an account written by one (the admin CLI) is found by the other at once", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [sa, sb] = [new EmbeddedAccountStore(a), new EmbeddedAccountStore(b)];
  const accountId = newId();
  const ts = new Date().toISOString();
  const events: AccountEvent[] = [
    {
      id: newId(),
      accountId,
      ts,
      type: "account.registered",
      data: { email: null, tier: "free", limits: null },
    },
    {
      id: newId(),
      accountId,
      ts,
      type: "key.issued",
      data: { keyId: "aaaabbbbccccdddd", hash: "ab".repeat(32), prefix: "bak_x" },
    },
  ];
  await sb.append(events);
  expect((await sa.findByKeyId("aaaabbbbccccdddd"))?.id).toBe(accountId);
  // the same events appended again through the other connection change nothing
  await sa.append(events);
  expect((await sb.getAccount(accountId))?.version).toBe(2);
  expect(await sa.events(accountId)).toHaveLength(2);
  // one server secret for both, whichever asks first
  const [x, y] = await Promise.all([sa.serverSecret("s"), sb.serverSecret("s")]);
  expect(x).toBe(y);
  // an event of an account never registered is dropped
  await sa.append([{ ...(events[1] as AccountEvent), id: newId(), accountId: newId() }]);
  expect(a.get<{ n: number }>("SELECT count(*) AS n FROM account_events")?.n).toBe(2);
});

test("discoveries: a poll sees a record another connection stored after `since`, even with an older `at`; a takedown is final", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [ea, eb] = [new EmbeddedDiscoveryStore(a), new EmbeddedDiscoveryStore(b)];
  const rec = (domain: string, at: string, status: DiscoveryRecord["status"] = "nothing") => ({
    ...emptyRecord(domain, null),
    at,
    status,
  });
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  // the store stamps each row with the clock's time: the clock is set, a second a step
  const t0 = Date.now();
  const since = new Date(t0 + 1000).toISOString();
  try {
    setSystemTime(new Date(t0));
    await ea.saveDiscovery(rec("one.test", ago(1000)));
    expect(await ea.discoveries(since)).toEqual([]);
    // the other process finished a discovery that began before `since`, and stores it now
    setSystemTime(new Date(t0 + 2000));
    await eb.saveDiscovery(rec("two.test", ago(10_000)));
  } finally {
    setSystemTime();
  }
  expect((await ea.discoveries(since)).map((r) => r.domain)).toEqual(["two.test"]);
  await eb.saveDiscovery(rec("two.test", ago(0), "taken_down"));
  const kept = await ea.saveDiscovery(rec("two.test", ago(0), "found"));
  expect(kept.status).toBe("taken_down");
  expect((await eb.discovery("two.test"))?.status).toBe("taken_down");
});
