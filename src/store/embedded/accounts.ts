import { join } from "node:path";
import { type Account, type AccountEvent, applyAccountEvent } from "../../accounts/model";
import type { AccountStore } from "../../accounts/port";
import { JsonlLog } from "./jsonl";

/** Embedded account store: events in DATA_DIR/accounts.jsonl, projection replayed into memory. */
export class EmbeddedAccountStore implements AccountStore {
  private log: JsonlLog<AccountEvent>;
  private accounts = new Map<string, Account>();
  private byKey = new Map<string, string>();
  private eventsByAccount = new Map<string, AccountEvent[]>();
  private seen = new Set<string>();

  constructor(dataDir: string) {
    this.log = new JsonlLog(join(dataDir, "accounts.jsonl"));
    for (const e of this.log.readAll()) this.apply(e);
  }

  async append(events: AccountEvent[]): Promise<void> {
    const fresh = events.filter((e) => !this.seen.has(e.id));
    this.log.append(fresh);
    for (const e of fresh) this.apply(e);
  }

  async getAccount(accountId: string) {
    if (!this.accounts.has(accountId)) this.catchUp();
    return this.accounts.get(accountId) ?? null;
  }

  /**
   * Catches up on every call (a stat when nothing changed): key checks reach the store only
   * when the key cache misses, and they must see keys the admin CLI revoked since.
   */
  async findByKeyId(keyId: string) {
    this.catchUp();
    const id = this.byKey.get(keyId);
    return id ? (this.accounts.get(id) ?? null) : null;
  }

  async listAccounts(query: { email?: string; limit: number }) {
    this.catchUp();
    const email = query.email?.toLowerCase();
    const all = [...this.accounts.values()].filter(
      (a) => email === undefined || a.email?.toLowerCase() === email,
    );
    return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).slice(0, query.limit);
  }

  /** Apply events another process (the admin CLI) appended since we last read. */
  private catchUp() {
    for (const e of this.log.readNew()) this.apply(e);
  }

  async events(accountId: string) {
    return [...(this.eventsByAccount.get(accountId) ?? [])];
  }

  close() {
    this.log.close();
  }

  private apply(e: AccountEvent) {
    if (this.seen.has(e.id)) return;
    this.seen.add(e.id);
    const next = applyAccountEvent(this.accounts.get(e.accountId) ?? null, e);
    if (!next) return;
    this.accounts.set(next.id, next);
    if (e.type === "key.issued") this.byKey.set(e.data.keyId, next.id);
    const list = this.eventsByAccount.get(e.accountId) ?? [];
    list.push(e);
    this.eventsByAccount.set(e.accountId, list);
  }
}
