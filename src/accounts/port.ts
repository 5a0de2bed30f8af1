import type { Account, AccountEvent } from "./model";

/** Storage port for the account aggregate: an append-only event log plus its projection. */
export interface AccountStore {
  /** Append events (in order) and update the projection. Resolves once durable. */
  append(events: AccountEvent[]): Promise<void>;
  getAccount(accountId: string): Promise<Account | null>;
  /** the account holding this key id (revoked keys included), or null */
  findByKeyId(keyId: string): Promise<Account | null>;
  /** every event of one account, oldest first */
  events(accountId: string): Promise<AccountEvent[]>;
  /** accounts oldest first, at most `limit`; `email` matches case-insensitively (operator views) */
  listAccounts(query: { email?: string; limit: number }): Promise<Account[]>;
}
