import type { Account, AccountEvent } from "../model";

/**
 * An account's data key (AES-256-GCM, base64url) and the lookup index of its e-mail address
 * (an HMAC of the normalized address). Kept outside the append-only log, in a mutable record that
 * is destroyed when the account is deleted: the sealed personal data in the log is then unreadable.
 */
export interface DataKeyRecord {
  accountId: string;
  key: string;
  /** null for accounts that cannot log in (operator-created with an e-mail label) */
  emailIndex: string | null;
}

/** Storage port for the account aggregate: an append-only event log plus its projection. */
export interface AccountStore {
  /** Append events (in order) and update the projection. Resolves once durable. */
  append(events: AccountEvent[]): Promise<void>;
  getAccount(accountId: string): Promise<Account | null>;
  /** the account holding this key id (revoked keys included), or null */
  findByKeyId(keyId: string): Promise<Account | null>;
  /** the account holding this publishable key id (revoked ones included), or null */
  findByPublishableKeyId(keyId: string): Promise<Account | null>;
  /** every event of one account, oldest first */
  events(accountId: string): Promise<AccountEvent[]>;
  /** store a data key; false (nothing stored) when its emailIndex is already taken */
  putDataKey(record: DataKeyRecord): Promise<boolean>;
  getDataKey(accountId: string): Promise<DataKeyRecord | null>;
  /** the account id registered under this e-mail index, or null */
  findByEmailIndex(emailIndex: string): Promise<string | null>;
  /** destroy the data key and the e-mail index (crypto-shredding); idempotent */
  deleteDataKey(accountId: string): Promise<void>;
  /** a named random server secret (base64url), created once and shared by every instance */
  serverSecret(name: string): Promise<string>;
  /** accounts oldest first, at most `limit` (Infinity: all; operator views) */
  listAccounts(query: { limit: number }): Promise<Account[]>;
}

/** A refresh, e-mail verification or password reset token: only its SHA-256 is stored. */
export interface TokenRecord {
  hash: string;
  kind: "refresh" | "verify" | "reset";
  accountId: string;
  /** refresh tokens: the login session they rotate within */
  family: string | null;
  /** epoch ms */
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
}

/** Storage port for tokens (mutable records; no personal data). */
export interface TokenStore {
  put(record: TokenRecord): Promise<void>;
  get(hash: string): Promise<TokenRecord | null>;
  /** mark the token used; true only for the one call that found it unused and unrevoked */
  use(hash: string, at: number): Promise<boolean>;
  /** revoke every token of a refresh family */
  revokeFamily(family: string, at: number): Promise<void>;
  /** forget every token of an account (deletion) */
  removeAccount(accountId: string): Promise<void>;
}
