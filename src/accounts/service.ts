import { newId } from "../platform/ids";
import type { BucketLimits, Tier } from "../quota/limits";
import { generateKey, hashKey, parseKeyId, sameHash } from "./keys";
import type { Account, AccountEvent, Principal, SealedPii } from "./model";
import { newDataKey, seal, unseal } from "./pii";
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

  /**
   * A new account with one key. An operator-supplied `email` (a label; such accounts cannot log
   * in) is sealed with a fresh data key like self-registered addresses, never written in clear;
   * `accountId` and `pii` are given by self-registration (accounts/auth.ts).
   */
  async createAccountWithKey(input: {
    tier: Tier;
    email?: string | null;
    limits?: Partial<BucketLimits> | null;
    accountId?: string;
    pii?: SealedPii;
  }): Promise<IssuedKey> {
    const accountId = input.accountId ?? newId();
    let pii = input.pii;
    if (!pii && input.email) {
      const dataKey = newDataKey();
      await this.store.putDataKey({ accountId, key: dataKey, emailIndex: null });
      pii = { email: await seal(dataKey, accountId, input.email), passwordHash: null };
    }
    const ts = new Date(this.now()).toISOString();
    const key = generateKey();
    const events: AccountEvent[] = [
      {
        id: newId(),
        accountId,
        ts,
        type: "account.registered",
        data: {
          email: null,
          tier: input.tier,
          limits: input.limits ?? null,
          ...(pii ? { pii } : {}),
        },
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

  /** One account with its e-mail address unsealed (operator views), or null. */
  async getAccountWithEmail(accountId: string): Promise<Account | null> {
    const a = await this.store.getAccount(accountId);
    return a && { ...a, email: await this.emailOf(a) };
  }

  /**
   * Accounts oldest first with their e-mail addresses unsealed (operator views). `email` matches
   * case-insensitively and exactly. Addresses are sealed per account, so a search by e-mail
   * unseals each account's address in turn: an operator's scan, linear in the accounts.
   */
  async listAccounts(query: { email?: string; limit: number }): Promise<Account[]> {
    const wanted = query.email?.trim().toLowerCase();
    const out: Account[] = [];
    const all = await this.store.listAccounts({
      limit: wanted === undefined ? query.limit : Number.POSITIVE_INFINITY,
    });
    for (const a of all) {
      if (out.length >= query.limit) break;
      const email = await this.emailOf(a);
      if (wanted === undefined || email?.toLowerCase() === wanted) out.push({ ...a, email });
    }
    return out;
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

  /** Drop the account's cached keys (after a revocation made outside this service). */
  forget(accountId: string) {
    this.forgetAccount(accountId);
  }

  /**
   * The account's e-mail address: unsealed with its data key, or the plain address of an account
   * written by an earlier version; null once the account is deleted (its key destroyed).
   */
  async emailOf(account: Account): Promise<string | null> {
    const dataKey = await this.store.getDataKey(account.id);
    if (!dataKey || !account.pii?.email) return account.email ?? null;
    return unseal(dataKey.key, account.id, account.pii.email);
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
