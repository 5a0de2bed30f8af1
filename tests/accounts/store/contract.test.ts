import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { AccountEvent } from "../../../src/accounts/model";
import { EmbeddedAccountStore } from "../../../src/accounts/store/embedded";
import { EmbeddedTokenStore } from "../../../src/accounts/store/embedded-tokens";
import { MongoAccountStore, MongoTokenStore } from "../../../src/accounts/store/mongo";
import type { AccountStore, TokenStore } from "../../../src/accounts/store/port";
import { newId } from "../../../src/platform/ids";
import { portContract } from "../../support/port-contract";

/**
 * The accounts store's contract (the account event log and its projection, keys, data keys,
 * server secrets) and the token store's, on both adapters.
 */
portContract<{ accounts: AccountStore; tokens: TokenStore }>(
  "accounts",
  {
    embedded: (db) => ({
      accounts: new EmbeddedAccountStore(db),
      tokens: new EmbeddedTokenStore(db),
    }),
    mongo: async (db) => {
      await MongoAccountStore.ensureIndexes(db);
      return { accounts: new MongoAccountStore(db), tokens: new MongoTokenStore(db) };
    },
  },
  (get) => {
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

    test("publishable keys: found by id, revoked one by one and with the account", async () => {
      const s = await get();
      const accountId = newId();
      const ts = new Date().toISOString();
      const issued = (keyId: string): AccountEvent => ({
        id: newId(),
        accountId,
        ts,
        type: "publishable.issued",
        data: {
          keyId,
          hash: "ef".repeat(32),
          prefix: "pk_x",
          origins: ["*.example.com", "localhost:5173"],
          dailyCap: keyId.endsWith("01") ? 500 : null,
        },
      });
      const [one, two] = ["1", "2"].map((n) => `${randomBytes(7).toString("hex")}0${n}`);
      await s.accounts.append([registered(accountId), issued(one as string)]);
      await s.accounts.append([
        issued(two as string),
        { id: newId(), accountId, ts, type: "publishable.revoked", data: { keyId: one as string } },
      ]);
      const found = await s.accounts.findByPublishableKeyId(two as string);
      expect(found?.id).toBe(accountId);
      expect(found?.publishableKeys).toEqual([
        {
          id: one as string,
          hash: "ef".repeat(32),
          prefix: "pk_x",
          origins: ["*.example.com", "localhost:5173"],
          dailyCap: 500,
          createdAt: ts,
          revokedAt: ts,
        },
        expect.objectContaining({ id: two, revokedAt: null }),
      ]);
      expect(await s.accounts.findByKeyId(two as string)).toBeNull();
      expect(await s.accounts.findByPublishableKeyId("ffffffffffffffff")).toBeNull();
      await s.accounts.append([{ id: newId(), accountId, ts, type: "account.deleted", data: {} }]);
      const deleted = await s.accounts.findByPublishableKeyId(two as string);
      expect(deleted?.publishableKeys?.every((k) => k.revokedAt)).toBe(true);
    });

    test("listAccounts: oldest first, at most limit", async () => {
      const s = await get();
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
      const ids = [newId(), newId(), newId()];
      await s.accounts.append(
        ids.map(
          (accountId, i): AccountEvent => ({
            id: newId(),
            accountId,
            ts: at(2 - i), // registered in reverse order of the ids
            type: "account.registered",
            data: { email: null, tier: "free", limits: null },
          }),
        ),
      );
      const all = await s.accounts.listAccounts({ limit: Number.POSITIVE_INFINITY });
      expect(all.map((a) => a.createdAt)).toEqual(all.map((a) => a.createdAt).sort());
      const mine = all.filter((a) => ids.includes(a.id)).map((a) => a.id);
      expect(mine).toEqual([ids[2], ids[1], ids[0]] as string[]);
      expect(await s.accounts.listAccounts({ limit: 1 })).toHaveLength(1);
    });

    test("unknown ids are null", async () => {
      const s = await get();
      expect(await s.accounts.getAccount("nope")).toBeNull();
      expect(await s.accounts.findByKeyId("ffffffffffffffff")).toBeNull();
    });

    test("data keys: stored outside the log, one account per e-mail index, deleted for good", async () => {
      const s = await get();
      const accountId = newId();
      const emailIndex = `idx-${newId()}`;
      expect(await s.accounts.putDataKey({ accountId, key: "k1", emailIndex })).toBe(true);
      expect(await s.accounts.getDataKey(accountId)).toEqual({ accountId, key: "k1", emailIndex });
      expect(await s.accounts.findByEmailIndex(emailIndex)).toBe(accountId);
      // the index is taken: nothing is stored for the second account
      const other = newId();
      expect(await s.accounts.putDataKey({ accountId: other, key: "k2", emailIndex })).toBe(false);
      expect(await s.accounts.getDataKey(other)).toBeNull();
      // accounts without an index (operator labels) do not collide
      expect(await s.accounts.putDataKey({ accountId: other, key: "k2", emailIndex: null })).toBe(
        true,
      );
      expect(await s.accounts.putDataKey({ accountId: newId(), key: "k3", emailIndex: null })).toBe(
        true,
      );
      await s.accounts.deleteDataKey(accountId);
      expect(await s.accounts.getDataKey(accountId)).toBeNull();
      expect(await s.accounts.findByEmailIndex(emailIndex)).toBeNull();
      await s.accounts.deleteDataKey(accountId); // idempotent
      expect(await s.accounts.putDataKey({ accountId: newId(), key: "k4", emailIndex })).toBe(true);
    });

    test("server secrets are created once and then always the same", async () => {
      const s = await get();
      const a = await s.accounts.serverSecret("contract-test");
      expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await s.accounts.serverSecret("contract-test")).toBe(a);
      expect(await s.accounts.serverSecret("contract-other")).not.toBe(a);
    });

    test("password changes, token revocations and deletion are projected", async () => {
      const s = await get();
      const accountId = newId();
      const ts = new Date().toISOString();
      const keyId = newId().replaceAll("-", "").slice(-16);
      await s.accounts.append([
        {
          id: newId(),
          accountId,
          ts,
          type: "account.registered",
          data: {
            email: null,
            tier: "free",
            limits: null,
            pii: { email: "v1.sealed-email", passwordHash: "v1.sealed-1" },
          },
        },
        {
          id: newId(),
          accountId,
          ts,
          type: "key.issued",
          data: { keyId, hash: "ef".repeat(32), prefix: "p" },
        },
        {
          id: newId(),
          accountId,
          ts,
          type: "password.changed",
          data: { passwordHash: "v1.sealed-2" },
        },
        { id: newId(), accountId, ts, type: "tokens.revoked", data: { reason: "password_reset" } },
      ]);
      expect(await s.accounts.getAccount(accountId)).toMatchObject({
        pii: { email: "v1.sealed-email", passwordHash: "v1.sealed-2" },
        tokensRevokedAt: ts,
        deletedAt: null,
      });
      const later = new Date(Date.now() + 1000).toISOString();
      await s.accounts.append([
        { id: newId(), accountId, ts: later, type: "account.deleted", data: {} },
      ]);
      const a = await s.accounts.getAccount(accountId);
      expect(a).toMatchObject({ email: null, pii: null, deletedAt: later, tokensRevokedAt: later });
      expect(a?.keys[0]?.revokedAt).toBe(later);
    });

    test("tokens: stored by hash, used once, revoked by family, removed with the account", async () => {
      const s = await get();
      const accountId = newId();
      const family = newId();
      const now = Date.now();
      const rec = (hash: string, fam: string | null = family) => ({
        hash,
        kind: "refresh" as const,
        accountId,
        family: fam,
        createdAt: now,
        expiresAt: now + 60_000,
        usedAt: null,
        revokedAt: null,
      });
      const [h1, h2, h3] = [newId(), newId(), newId()];
      await s.tokens.put(rec(h1));
      await s.tokens.put(rec(h2));
      await s.tokens.put(rec(h3, newId()));
      expect(await s.tokens.get(h1)).toEqual(rec(h1));
      expect(await s.tokens.get("missing")).toBeNull();
      expect(await s.tokens.use(h1, now + 1)).toBe(true);
      expect(await s.tokens.use(h1, now + 2)).toBe(false);
      expect((await s.tokens.get(h1))?.usedAt).toBe(now + 1);
      await s.tokens.revokeFamily(family, now + 3);
      expect((await s.tokens.get(h2))?.revokedAt).toBe(now + 3);
      expect(await s.tokens.use(h2, now + 4)).toBe(false);
      expect((await s.tokens.get(h3))?.revokedAt).toBeNull();
      await s.tokens.removeAccount(accountId);
      for (const h of [h1, h2, h3]) expect(await s.tokens.get(h)).toBeNull();
    });

    test("tokens: of concurrent uses of one token exactly one wins (refresh reuse is detected)", async () => {
      const s = await get();
      const accountId = newId();
      const now = Date.now();
      for (let round = 0; round < 10; round++) {
        const hash = newId();
        await s.tokens.put({
          hash,
          kind: "refresh",
          accountId,
          family: newId(),
          createdAt: now,
          expiresAt: now + 60_000,
          usedAt: null,
          revokedAt: null,
        });
        const wins = await Promise.all(
          Array.from({ length: 4 }, (_, i) => s.tokens.use(hash, now + i)),
        );
        expect(wins.filter(Boolean)).toHaveLength(1);
      }
      await s.tokens.removeAccount(accountId);
    });
  },
);
