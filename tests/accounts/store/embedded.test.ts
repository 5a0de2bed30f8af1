/**
 * The embedded accounts and token stores where their contract does not reach: two connections
 * on one DATA_DIR (the service and the admin CLI are two processes), expired tokens removed at
 * open.
 */
import { afterEach, expect, test } from "bun:test";
import type { AccountEvent } from "../../../src/accounts/model";
import { EmbeddedAccountStore } from "../../../src/accounts/store/embedded";
import { EmbeddedTokenStore } from "../../../src/accounts/store/embedded-tokens";
import type { TokenRecord } from "../../../src/accounts/store/port";
import { newId } from "../../../src/platform/ids";
import type { Database } from "../../../src/store/embedded/db";
import { tempDir } from "../../support/app";
import { closeConnections, connections } from "../../support/db";

afterEach(closeConnections);

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

test("two connections: a token is used once", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [ta, tb] = [new EmbeddedTokenStore(a), new EmbeddedTokenStore(b)];
  await ta.put(token("t1", Date.now() + 60_000, "fam"));
  const uses = await Promise.all([ta.use("t1", 1), tb.use("t1", 2), ta.use("t1", 3)]);
  expect(uses.filter(Boolean)).toHaveLength(1);
  await tb.revokeFamily("fam", 9);
  expect((await ta.get("t1"))?.revokedAt).toBe(9);
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
