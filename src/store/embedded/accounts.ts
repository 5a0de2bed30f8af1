import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Account, type AccountEvent, applyAccountEvent } from "../../accounts/model";
import type { AccountStore, DataKeyRecord } from "../../accounts/port";
import { log } from "../../platform/log";
import { JsonlLog } from "./jsonl";
import { readOrCreateSecret, writePrivateFile } from "./secret-file";

/**
 * Embedded account store: events in DATA_DIR/accounts.jsonl, projection replayed into memory.
 * Data keys (crypto-shredding) live outside the log, one file per account under
 * DATA_DIR/account-keys/ (mode 0600), deleted with the account; server secrets under
 * DATA_DIR/secrets/.
 */
export class EmbeddedAccountStore implements AccountStore {
  private log: JsonlLog<AccountEvent>;
  private accounts = new Map<string, Account>();
  private byKey = new Map<string, string>();
  private byPublishable = new Map<string, string>();
  private eventsByAccount = new Map<string, AccountEvent[]>();
  private seen = new Set<string>();
  private keysDir: string;
  private dataKeys = new Map<string, DataKeyRecord>();
  private byEmailIndex = new Map<string, string>();

  constructor(private dataDir: string) {
    this.log = new JsonlLog(join(dataDir, "accounts.jsonl"));
    for (const e of this.log.readAll()) this.apply(e);
    this.keysDir = join(dataDir, "account-keys");
    this.loadDataKeys();
  }

  async putDataKey(record: DataKeyRecord): Promise<boolean> {
    if (record.emailIndex) {
      if (!this.byEmailIndex.has(record.emailIndex)) this.loadDataKeys();
      if (this.byEmailIndex.has(record.emailIndex)) return false;
    }
    // on disk first: a write that fails (a full disk) reserves nothing in memory either
    writePrivateFile(this.keyFile(record.accountId), JSON.stringify(record));
    if (record.emailIndex) this.byEmailIndex.set(record.emailIndex, record.accountId);
    this.dataKeys.set(record.accountId, record);
    return true;
  }

  async getDataKey(accountId: string) {
    if (!this.dataKeys.has(accountId)) this.loadDataKeys();
    return this.dataKeys.get(accountId) ?? null;
  }

  async findByEmailIndex(emailIndex: string) {
    if (!this.byEmailIndex.has(emailIndex)) this.loadDataKeys();
    return this.byEmailIndex.get(emailIndex) ?? null;
  }

  async deleteDataKey(accountId: string) {
    const record = this.dataKeys.get(accountId);
    if (record?.emailIndex) this.byEmailIndex.delete(record.emailIndex);
    this.dataKeys.delete(accountId);
    rmSync(this.keyFile(accountId), { force: true });
  }

  async serverSecret(name: string) {
    return readOrCreateSecret(join(this.dataDir, "secrets", name.replace(/[^a-z0-9-]/gi, "_")));
  }

  private keyFile(accountId: string) {
    return join(this.keysDir, `${accountId.replace(/[^0-9a-f-]/gi, "_")}.json`);
  }

  /** Read data key files not yet known (at start, and those another process wrote since). */
  private loadDataKeys() {
    if (!existsSync(this.keysDir)) return;
    for (const name of readdirSync(this.keysDir)) {
      if (!name.endsWith(".json") || this.dataKeys.has(name.slice(0, -5))) continue;
      try {
        const record = JSON.parse(readFileSync(join(this.keysDir, name), "utf8")) as DataKeyRecord;
        this.dataKeys.set(record.accountId, record);
        if (record.emailIndex) this.byEmailIndex.set(record.emailIndex, record.accountId);
      } catch {
        log("warn", "skipping unreadable account data key file", { file: name });
      }
    }
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

  async findByPublishableKeyId(keyId: string) {
    this.catchUp();
    const id = this.byPublishable.get(keyId);
    return id ? (this.accounts.get(id) ?? null) : null;
  }

  async listAccounts(query: { limit: number }) {
    this.catchUp();
    const all = [...this.accounts.values()];
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
    if (e.type === "publishable.issued") this.byPublishable.set(e.data.keyId, next.id);
    const list = this.eventsByAccount.get(e.accountId) ?? [];
    list.push(e);
    this.eventsByAccount.set(e.accountId, list);
  }
}
