import { LRUCache } from "lru-cache";
import { conflict, notFound } from "../platform/domain-errors";
import { newId } from "../platform/ids";
import type { BucketLimits, Tier } from "../quota/limits";
import type { Principal } from "../quota/principal";
import {
  generateKey,
  generatePublishableKey,
  hashKey,
  parseKeyId,
  parsePublishableKeyId,
  sameHash,
} from "./keys";
import type { Account, AccountEvent, PublishableKeyRecord, SealedPii } from "./model";
import { newDataKey, seal, unseal } from "./pii";
import type { AccountStore } from "./store/port";

/** A verified publishable key: whom it charges and where it may be used. */
export interface PublishableCaller {
  /** charged like the account's active API key (its buckets); keyId null when it has none */
  principal: Principal;
  keyId: string;
  origins: string[];
  dailyCap: number | null;
}

/** Most active publishable keys per account. */
export const MAX_PUBLISHABLE_KEYS = 20;

export interface IssuedKey {
  accountId: string;
  keyId: string;
  apiKey: string;
  tier: Tier;
}

/** Accounts and API keys: issuing, verifying (with a short in-memory cache), revoking. */
/** A key regeneration: the key issued and the keys it replaced (revoked in the same step). */
export interface KeyRegenerated {
  accountId: string;
  keyId: string;
  previous: string[];
}

/** Verified keys kept in memory at most (least recently used dropped first). */
const KEY_CACHE_ENTRIES = 10_000;

export class AccountService {
  private regenerated: ((e: KeyRegenerated) => Promise<unknown>)[] = [];
  /** verified keys by hash (and `id:<keyId>`), each until `expires` */
  private cache = new LRUCache<string, { principal: Principal; expires: number }>({
    max: KEY_CACHE_ENTRIES,
  });
  /** verified publishable keys by hash */
  private publishable = new LRUCache<string, { caller: PublishableCaller; expires: number }>({
    max: KEY_CACHE_ENTRIES,
  });

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

  /**
   * Runs `listener` after every key regeneration, whichever route regenerates (operator or
   * self-service), before the new key is handed out (the quota's carry-over).
   */
  onKeyRegenerated(listener: (e: KeyRegenerated) => Promise<unknown>): void {
    this.regenerated.push(listener);
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
    for (const listener of this.regenerated)
      await listener({ accountId, keyId: key.keyId, previous: active });
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
   * revoked; an unknown key id is key_not_found.
   */
  async revokeKey(keyId: string): Promise<{ accountId: string; keyId: string; revokedAt: string }> {
    const account = await this.store.findByKeyId(keyId);
    const key = account?.keys.find((k) => k.id === keyId);
    if (!account || !key) throw notFound("key_not_found", `No key ${keyId}.`);
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
    const principal = principalOf(account, keyId);
    this.remember(hash, principal);
    return principal;
  }

  /** principalOfKeyId's answer from the cache, synchronously; undefined when not cached. */
  cachedKeyId(keyId: string): Principal | undefined {
    const cached = this.cache.get(`id:${keyId}`);
    return cached && cached.expires > this.now() ? cached.principal : undefined;
  }

  /**
   * The principal of an active key by its id alone (signed image URLs name their key by id):
   * null when the key is unknown, revoked (regenerated) or its account deleted. Cached like
   * verified keys, and dropped with them when the account's keys change on this instance.
   */
  async principalOfKeyId(keyId: string): Promise<Principal | null> {
    const cached = this.cachedKeyId(keyId);
    if (cached) return cached;
    const account = await this.store.findByKeyId(keyId);
    const key = account?.keys.find((k) => k.id === keyId);
    if (!account || !key || key.revokedAt || account.deletedAt) return null;
    const principal = principalOf(account, keyId);
    this.remember(`id:${keyId}`, principal);
    return principal;
  }

  private remember(slot: string, principal: Principal) {
    if (this.cacheTtlMs <= 0) return;
    this.cache.set(slot, { principal, expires: this.now() + this.cacheTtlMs });
  }

  /** A new publishable key (answered once, with its key). */
  async createPublishableKey(
    accountId: string,
    origins: string[],
    dailyCap: number | null,
  ): Promise<PublishableKeyRecord & { publishableKey: string }> {
    const account = await this.requireAccount(accountId);
    if (account.deletedAt) throw accountNotFound(accountId);
    const active = (account.publishableKeys ?? []).filter((k) => !k.revokedAt);
    if (active.length >= MAX_PUBLISHABLE_KEYS)
      throw conflict(
        "too_many_keys",
        `An account has at most ${MAX_PUBLISHABLE_KEYS} active publishable keys; revoke one first.`,
      );
    const k = generatePublishableKey();
    const ts = new Date(this.now()).toISOString();
    const unique = [...new Set(origins)];
    await this.store.append([
      {
        id: newId(),
        accountId,
        ts,
        type: "publishable.issued",
        data: { keyId: k.keyId, hash: k.hash, prefix: k.prefix, origins: unique, dailyCap },
      },
    ]);
    return {
      id: k.keyId,
      hash: k.hash,
      prefix: k.prefix,
      origins: unique,
      dailyCap,
      createdAt: ts,
      revokedAt: null,
      publishableKey: k.key,
    };
  }

  /**
   * Revoke a publishable key of the account (of any account when `accountId` is null: the
   * operator). Unknown (or another account's) key: key_not_found.
   */
  async revokePublishableKey(
    accountId: string | null,
    keyId: string,
  ): Promise<PublishableKeyRecord> {
    const account = await this.store.findByPublishableKeyId(keyId);
    const key = account?.publishableKeys?.find((k) => k.id === keyId);
    if (!account || !key || (accountId !== null && account.id !== accountId))
      throw notFound("key_not_found", `No publishable key ${keyId}.`);
    if (key.revokedAt) return key;
    const ts = new Date(this.now()).toISOString();
    await this.store.append([
      { id: newId(), accountId: account.id, ts, type: "publishable.revoked", data: { keyId } },
    ]);
    this.publishable.delete(key.hash);
    return { ...key, revokedAt: ts };
  }

  /** A publishable key's caller, or null when malformed, unknown, revoked or deleted. */
  async verifyPublishable(key: string): Promise<PublishableCaller | null> {
    const keyId = parsePublishableKeyId(key);
    if (!keyId) return null;
    const hash = hashKey(key);
    const cached = this.publishable.get(hash);
    if (cached && cached.expires > this.now()) return cached.caller;
    const account = await this.store.findByPublishableKeyId(keyId);
    const record = account?.publishableKeys?.find((k) => k.id === keyId);
    if (!account || !record || record.revokedAt || account.deletedAt) return null;
    if (!sameHash(record.hash, hash)) return null;
    const active = account.keys.find((k) => !k.revokedAt);
    const caller: PublishableCaller = {
      principal: principalOf(account, active?.id ?? null),
      keyId,
      origins: record.origins,
      dailyCap: record.dailyCap,
    };
    if (this.cacheTtlMs > 0)
      this.publishable.set(hash, { caller, expires: this.now() + this.cacheTtlMs });
    return caller;
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
    const keys = [...this.cache.entries()].filter(([, e]) => e.principal.accountId === accountId);
    for (const [hash] of keys) this.cache.delete(hash);
    const pub = [...this.publishable.entries()].filter(
      ([, e]) => e.caller.principal.accountId === accountId,
    );
    for (const [hash] of pub) this.publishable.delete(hash);
  }

  private async requireAccount(accountId: string): Promise<Account> {
    const account = await this.store.getAccount(accountId);
    if (!account) throw accountNotFound(accountId);
    return account;
  }
}

/** The caller behind a key of `account`. */
const principalOf = (account: Account, keyId: string | null): Principal => ({
  accountId: account.id,
  keyId,
  tier: account.tier,
  limits: account.limits,
});

/** No account with that id (or a deleted one). */
export const accountNotFound = (accountId: string) =>
  notFound("account_not_found", `No account ${accountId}.`);
