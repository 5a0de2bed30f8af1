import { newId } from "../platform/ids";
import type { BucketLimits, Tier } from "../quota/limits";
import { generateKey, hashKey, parseKeyId, sameHash } from "./keys";
import type { Account, AccountEvent, Principal } from "./model";
import type { AccountStore } from "./port";

export interface IssuedKey {
  accountId: string;
  keyId: string;
  apiKey: string;
  tier: Tier;
}

/** Accounts and API keys: issuing, verifying (with a short in-memory cache), revoking. */
export class AccountService {
  private cache = new Map<string, { principal: Principal; expires: number }>();

  constructor(
    private store: AccountStore,
    private cacheTtlMs = 30_000,
    private now: () => number = Date.now,
  ) {}

  async createAccountWithKey(input: {
    tier: Tier;
    email?: string | null;
    limits?: Partial<BucketLimits> | null;
  }): Promise<IssuedKey> {
    const accountId = newId();
    const ts = new Date(this.now()).toISOString();
    const key = generateKey();
    const events: AccountEvent[] = [
      {
        id: newId(),
        accountId,
        ts,
        type: "account.registered",
        data: { email: input.email ?? null, tier: input.tier, limits: input.limits ?? null },
      },
      {
        id: newId(),
        accountId,
        ts,
        type: "key.issued",
        data: { keyId: key.keyId, hash: key.hash, prefix: key.prefix },
      },
    ];
    await this.store.append(events);
    return { accountId, keyId: key.keyId, apiKey: key.apiKey, tier: input.tier };
  }

  /** Revoke every active key of the account and issue a new one (shown once). */
  async regenerateKey(
    accountId: string,
  ): Promise<{ keyId: string; apiKey: string; previous: string[] }> {
    const account = await this.requireAccount(accountId);
    const ts = new Date(this.now()).toISOString();
    const active = account.keys.filter((k) => !k.revokedAt).map((k) => k.id);
    const key = generateKey();
    await this.store.append([
      ...active.map(
        (keyId): AccountEvent => ({
          id: newId(),
          accountId,
          ts,
          type: "key.revoked",
          data: { keyId },
        }),
      ),
      {
        id: newId(),
        accountId,
        ts,
        type: "key.issued",
        data: { keyId: key.keyId, hash: key.hash, prefix: key.prefix },
      },
    ]);
    this.forgetAccount(accountId);
    return { keyId: key.keyId, apiKey: key.apiKey, previous: active };
  }

  async changeTier(
    accountId: string,
    tier: Tier,
    limits: Partial<BucketLimits> | null,
  ): Promise<Account> {
    await this.requireAccount(accountId);
    await this.store.append([
      {
        id: newId(),
        accountId,
        ts: new Date(this.now()).toISOString(),
        type: "tier.changed",
        data: { tier, limits },
      },
    ]);
    this.forgetAccount(accountId);
    return (await this.store.getAccount(accountId)) as Account;
  }

  getAccount(accountId: string): Promise<Account | null> {
    return this.store.getAccount(accountId);
  }

  /** Accounts oldest first (operator views); `email` matches case-insensitively. */
  listAccounts(query: { email?: string; limit: number }): Promise<Account[]> {
    return this.store.listAccounts(query);
  }

  /**
   * Revoke one key (operator). Revoking a revoked key changes nothing and answers when it was
   * revoked; an unknown key id throws KeyNotFound.
   */
  async revokeKey(keyId: string): Promise<{ accountId: string; keyId: string; revokedAt: string }> {
    const account = await this.store.findByKeyId(keyId);
    const key = account?.keys.find((k) => k.id === keyId);
    if (!account || !key) throw new KeyNotFound(keyId);
    if (key.revokedAt) return { accountId: account.id, keyId, revokedAt: key.revokedAt };
    const ts = new Date(this.now()).toISOString();
    await this.store.append([
      { id: newId(), accountId: account.id, ts, type: "key.revoked", data: { keyId } },
    ]);
    this.forgetAccount(account.id);
    return { accountId: account.id, keyId, revokedAt: ts };
  }

  /**
   * The principal of a key checked within the cache's lifetime, answered synchronously (the
   * request hot path); undefined when the key is not in the cache (ask `verifyKey`).
   */
  cachedKey(apiKey: string): Principal | undefined {
    const cached = this.cache.get(hashKey(apiKey));
    return cached && cached.expires > this.now() ? cached.principal : undefined;
  }

  /** The principal for an API key, or null when the key is malformed, unknown or revoked. */
  async verifyKey(apiKey: string | null | undefined): Promise<Principal | null> {
    if (!apiKey) return null;
    const keyId = parseKeyId(apiKey);
    if (!keyId) return null;
    const hash = hashKey(apiKey);
    const cached = this.cache.get(hash);
    if (cached && cached.expires > this.now()) return cached.principal;
    const account = await this.store.findByKeyId(keyId);
    const key = account?.keys.find((k) => k.id === keyId);
    if (!account || !key || key.revokedAt || !sameHash(key.hash, hash)) return null;
    const principal: Principal = {
      accountId: account.id,
      keyId,
      tier: account.tier,
      limits: account.limits,
    };
    if (this.cacheTtlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { principal, expires: this.now() + this.cacheTtlMs });
    }
    return principal;
  }

  private forgetAccount(accountId: string) {
    for (const [hash, entry] of this.cache)
      if (entry.principal.accountId === accountId) this.cache.delete(hash);
  }

  private async requireAccount(accountId: string): Promise<Account> {
    const account = await this.store.getAccount(accountId);
    if (!account) throw new AccountNotFound(accountId);
    return account;
  }
}

export class AccountNotFound extends Error {
  constructor(readonly accountId: string) {
    super(`No account ${accountId}`);
  }
}

export class KeyNotFound extends Error {}
