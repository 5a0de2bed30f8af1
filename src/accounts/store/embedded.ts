import { randomBytes } from "node:crypto";
import { log } from "../../platform/log";
import type { Database } from "../../store/embedded/db";
import { type Account, type AccountEvent, applyAccountEvent } from "../model";
import type { AccountStore, DataKeyRecord } from "./port";

/**
 * Embedded account store on the shared SQLite database: `account_events` is the append-only log
 * (unique event id, so a replayed append is idempotent), `accounts` its projection (one JSON row
 * per account), `account_key_ids` the lookup of API and publishable key ids; each append writes
 * the events and the projection in one transaction. Data keys (crypto-shredding) live outside the
 * log in `account_data_keys`, deleted with the account; `server_secrets` holds shared secrets.
 * Every read goes to the database, so writes by another process on the same DATA_DIR (the admin
 * CLI) are seen at once.
 */
export class EmbeddedAccountStore implements AccountStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS account_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        event TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS account_events_by_account ON account_events (account_id, seq);
      CREATE TABLE IF NOT EXISTS accounts (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        account TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS accounts_by_created ON accounts (created_at, id);
      CREATE TABLE IF NOT EXISTS account_key_ids (
        kind TEXT NOT NULL,
        key_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        PRIMARY KEY (kind, key_id)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS account_data_keys (
        account_id TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        email_index TEXT UNIQUE
      );
      CREATE TABLE IF NOT EXISTS server_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `);
  }

  async append(events: AccountEvent[]): Promise<void> {
    this.appendSync(events);
  }

  /**
   * Append in one transaction: events already stored (by id) are skipped, an event for an
   * account that was never registered is dropped, and the projection is updated with them.
   */
  appendSync(events: AccountEvent[]): number {
    if (events.length === 0) return 0;
    return this.db.tx(() => {
      let added = 0;
      for (const e of events) {
        if (this.db.get("SELECT 1 FROM account_events WHERE id = ?", e.id)) continue;
        const next = applyAccountEvent(this.read(e.accountId), e);
        if (!next) continue;
        this.db.run(
          "INSERT INTO account_events (id, account_id, event) VALUES (?, ?, ?)",
          e.id,
          e.accountId,
          JSON.stringify(e),
        );
        this.db.run(
          "INSERT OR REPLACE INTO accounts (id, created_at, account) VALUES (?, ?, ?)",
          next.id,
          next.createdAt,
          JSON.stringify(next),
        );
        const kind =
          e.type === "key.issued" ? "api" : e.type === "publishable.issued" ? "publishable" : null;
        if (kind)
          this.db.run(
            "INSERT OR IGNORE INTO account_key_ids (kind, key_id, account_id) VALUES (?, ?, ?)",
            kind,
            (e.data as { keyId: string }).keyId,
            next.id,
          );
        added++;
      }
      return added;
    }, true);
  }

  private read(accountId: string): Account | null {
    const row = this.db.get<{ account: string }>(
      "SELECT account FROM accounts WHERE id = ?",
      accountId,
    );
    return row ? (JSON.parse(row.account) as Account) : null;
  }

  private byKeyId(kind: "api" | "publishable", keyId: string): Account | null {
    const row = this.db.get<{ account: string }>(
      `SELECT a.account FROM account_key_ids k JOIN accounts a ON a.id = k.account_id
       WHERE k.kind = ? AND k.key_id = ?`,
      kind,
      keyId,
    );
    return row ? (JSON.parse(row.account) as Account) : null;
  }

  async getAccount(accountId: string) {
    return this.read(accountId);
  }

  async findByKeyId(keyId: string) {
    return this.byKeyId("api", keyId);
  }

  async findByPublishableKeyId(keyId: string) {
    return this.byKeyId("publishable", keyId);
  }

  async listAccounts(query: { limit: number }) {
    return this.db
      .all<{ account: string }>(
        "SELECT account FROM accounts ORDER BY created_at, id LIMIT ?",
        Number.isFinite(query.limit) ? query.limit : -1,
      )
      .map((r) => JSON.parse(r.account) as Account);
  }

  async events(accountId: string) {
    return this.db
      .all<{ event: string }>(
        "SELECT event FROM account_events WHERE account_id = ? ORDER BY seq",
        accountId,
      )
      .map((r) => JSON.parse(r.event) as AccountEvent);
  }

  async putDataKey(record: DataKeyRecord): Promise<boolean> {
    return this.putDataKeySync(record);
  }

  /** false when the account already has a key or the e-mail index is taken */
  putDataKeySync(record: DataKeyRecord): boolean {
    return (
      this.db.write(
        "INSERT OR IGNORE INTO account_data_keys (account_id, key, email_index) VALUES (?, ?, ?)",
        record.accountId,
        record.key,
        record.emailIndex,
      ).changes === 1
    );
  }

  async getDataKey(accountId: string) {
    const row = this.db.get<{ key: string; email_index: string | null }>(
      "SELECT key, email_index FROM account_data_keys WHERE account_id = ?",
      accountId,
    );
    return row ? { accountId, key: row.key, emailIndex: row.email_index } : null;
  }

  async findByEmailIndex(emailIndex: string) {
    return (
      this.db.get<{ account_id: string }>(
        "SELECT account_id FROM account_data_keys WHERE email_index = ?",
        emailIndex,
      )?.account_id ?? null
    );
  }

  /**
   * The row goes, its bytes are zeroed in the page (secure_delete, see db.ts), and the WAL
   * holding the page's earlier versions is checkpointed and truncated: no copy of the key stays
   * in a file under DATA_DIR. The truncation waits (up to the busy timeout) for another
   * process's read in progress; account deletions are rare.
   */
  async deleteDataKey(accountId: string) {
    this.db.write("DELETE FROM account_data_keys WHERE account_id = ?", accountId);
    try {
      this.db.checkpoint();
    } catch (err) {
      // the key is gone from the table; its old page stays in the WAL until a later checkpoint
      log("warn", "data key deleted, but the WAL could not be truncated", {
        reason: (err as Error).message,
      });
    }
  }

  async serverSecret(name: string) {
    return this.serverSecretSync(name, randomBytes(32).toString("base64url"));
  }

  /** the secret stored under `name`, `fresh` stored first when there is none (first one wins) */
  serverSecretSync(name: string, fresh: string): string {
    const read = () =>
      this.db.get<{ value: string }>("SELECT value FROM server_secrets WHERE name = ?", name)
        ?.value;
    // read first: a stored secret needs no write (and no write lock)
    return (
      read() ??
      this.db.tx(() => {
        this.db.run(
          "INSERT OR IGNORE INTO server_secrets (name, value) VALUES (?, ?)",
          name,
          fresh,
        );
        return read() as string;
      }, true)
    );
  }
}
