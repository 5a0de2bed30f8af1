import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { generateKey, hashKey, parseKeyId, sameHash } from "../../src/accounts/keys";
import { AccountService } from "../../src/accounts/service";
import { EmbeddedAccountStore } from "../../src/accounts/store/embedded";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { tempDir } from "../support/app";
import { databaseBytes } from "../support/db";

const dirs: string[] = [];
const dbs: Database[] = [];
const dir = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
/** an account store on the database under `d` (each call its own connection, like a process) */
const store = (d: string) => {
  const db = new Database(join(d, DB_FILE));
  dbs.push(db);
  return new EmbeddedAccountStore(db);
};
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("API keys", () => {
  test("have a recognisable prefix and at least 128 random bits", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = generateKey();
      expect(k.apiKey).toMatch(/^bak_[0-9a-f]{16}_[A-Za-z0-9_-]{32}$/);
      // 32 base64url characters = 192 bits of secret
      expect(Buffer.from(k.apiKey.slice(21), "base64url").length).toBe(24);
      expect(parseKeyId(k.apiKey)).toBe(k.keyId);
      expect(k.hash).toBe(hashKey(k.apiKey));
      seen.add(k.apiKey);
    }
    expect(seen.size).toBe(200);
  });

  test("malformed keys have no key id", () => {
    for (const bad of ["", "bak_", "bak_xyz_abc", "sk_0123456789abcdef_".padEnd(53, "a")])
      expect(parseKeyId(bad)).toBeNull();
  });

  test("hash comparison is exact", () => {
    const h = hashKey("a");
    expect(sameHash(h, hashKey("a"))).toBe(true);
    expect(sameHash(h, hashKey("b"))).toBe(false);
    expect(sameHash(h, "")).toBe(false);
  });

  test("only the hash is stored, the key verifies, a wrong secret does not", async () => {
    const d = dir();
    const svc = new AccountService(store(d));
    const issued = await svc.createAccountWithKey({ tier: "pro", email: "ops@acme.test" });
    const bytes = databaseBytes(d);
    expect(bytes).not.toContain(issued.apiKey);
    expect(bytes).toContain(hashKey(issued.apiKey));

    const p = await svc.verifyKey(issued.apiKey);
    expect(p).toEqual({
      accountId: issued.accountId,
      keyId: issued.keyId,
      tier: "pro",
      limits: null,
    });
    const forged = `${issued.apiKey.slice(0, 21)}${"A".repeat(32)}`;
    expect(await svc.verifyKey(forged)).toBeNull();
    expect(await svc.verifyKey(undefined)).toBeNull();
  });

  test("accounts and keys survive a restart (the database reopened)", async () => {
    const d = dir();
    const first = store(d);
    const issued = await new AccountService(first).createAccountWithKey({
      tier: "enterprise",
      limits: { svg: 5 },
    });
    for (const db of dbs.splice(0)) db.close();
    const again = new AccountService(store(d));
    expect(await again.verifyKey(issued.apiKey)).toMatchObject({
      tier: "enterprise",
      limits: { svg: 5 },
    });
  });

  test("a key issued by another process (admin CLI) is seen without a restart", async () => {
    const d = dir();
    const server = new AccountService(store(d));
    const cli = new AccountService(store(d));
    const issued = await cli.createAccountWithKey({ tier: "free" });
    expect(await server.verifyKey(issued.apiKey)).toMatchObject({ accountId: issued.accountId });
  });

  test("regenerating revokes the old key at once and issues a working new one", async () => {
    const svc = new AccountService(store(dir()));
    const issued = await svc.createAccountWithKey({ tier: "free" });
    expect(await svc.verifyKey(issued.apiKey)).not.toBeNull();
    const fresh = await svc.regenerateKey(issued.accountId);
    expect(fresh.previous).toEqual([issued.keyId]);
    expect(await svc.verifyKey(issued.apiKey)).toBeNull();
    expect(await svc.verifyKey(fresh.apiKey)).toMatchObject({ accountId: issued.accountId });
  });

  test("tier changes apply to the key's next check", async () => {
    const svc = new AccountService(store(dir()));
    const issued = await svc.createAccountWithKey({ tier: "free" });
    await svc.verifyKey(issued.apiKey);
    await svc.changeTier(issued.accountId, "pro", null);
    expect((await svc.verifyKey(issued.apiKey))?.tier).toBe("pro");
  });

  test("the key cache keeps repeated checks off the store", async () => {
    const accounts = store(dir());
    let lookups = 0;
    const counting = Object.assign(Object.create(accounts), {
      findByKeyId: (id: string) => {
        lookups++;
        return accounts.findByKeyId(id);
      },
    });
    const svc = new AccountService(counting, 30_000);
    const issued = await svc.createAccountWithKey({ tier: "free" });
    for (let i = 0; i < 10; i++) await svc.verifyKey(issued.apiKey);
    expect(lookups).toBe(1);
  });

  test("cachedKey answers from the cache only, and forgets regenerated keys", async () => {
    const svc = new AccountService(store(dir()), 30_000);
    const issued = await svc.createAccountWithKey({ tier: "pro" });
    expect(svc.cachedKey(issued.apiKey)).toBeUndefined();
    await svc.verifyKey(issued.apiKey);
    expect(svc.cachedKey(issued.apiKey)).toMatchObject({
      accountId: issued.accountId,
      tier: "pro",
    });
    // Change the last character to one it is not: a fixed "x" would equal it 1 time in 64.
    const last = issued.apiKey.at(-1) === "x" ? "y" : "x";
    expect(svc.cachedKey(`${issued.apiKey.slice(0, -1)}${last}`)).toBeUndefined();
    await svc.regenerateKey(issued.accountId);
    expect(svc.cachedKey(issued.apiKey)).toBeUndefined();
  });

  test("a key revoked by another instance is refused there once its cache entry expires", async () => {
    const d = dir();
    let t = 1_000_000;
    const a = new AccountService(store(d), 30_000, () => t);
    const b = new AccountService(store(d), 30_000, () => t);
    const issued = await a.createAccountWithKey({ tier: "free" });
    expect(await b.verifyKey(issued.apiKey)).not.toBeNull();
    await a.revokeKey(issued.keyId);
    expect(await a.verifyKey(issued.apiKey)).toBeNull();
    // B answers from its cache for the rest of the entry's lifetime, then reads the revocation
    t += 29_999;
    expect(await b.verifyKey(issued.apiKey)).not.toBeNull();
    t += 2;
    expect(await b.verifyKey(issued.apiKey)).toBeNull();
  });

  test("cache entries expire after the TTL", async () => {
    let t = 1_000_000;
    const svc = new AccountService(store(dir()), 30_000, () => t);
    const issued = await svc.createAccountWithKey({ tier: "free" });
    await svc.verifyKey(issued.apiKey);
    t += 29_999;
    expect(svc.cachedKey(issued.apiKey)).toBeDefined();
    t += 2;
    expect(svc.cachedKey(issued.apiKey)).toBeUndefined();
  });
});
