import type { Db } from "mongodb";
import { type Account, type AccountEvent, applyAccountEvent } from "../../accounts/model";
import type { AccountStore } from "../../accounts/port";
import { ensureIndexes } from "./indexes";

/**
 * MongoDB account store: `account_events` is the append-only log (unique event id, so a
 * replay is idempotent); `accounts` is its projection, updated after each append.
 */
export class MongoAccountStore implements AccountStore {
  constructor(private db: Db) {}

  private get eventsCol() {
    return this.db.collection<AccountEvent & { _id?: unknown }>("account_events");
  }
  private get accountsCol() {
    return this.db.collection<Account>("accounts");
  }

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "account_events", [
      { key: { id: 1 }, unique: true, name: "id_unique" },
      { key: { accountId: 1, _id: 1 }, name: "account_append_order" },
    ]);
    await ensureIndexes(db, "accounts", [
      { key: { id: 1 }, unique: true, name: "id_unique" },
      { key: { "keys.id": 1 }, name: "key_id" },
      { key: { email: 1 }, sparse: true, name: "email" },
    ]);
  }

  async append(events: AccountEvent[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.eventsCol.insertMany(
        events.map((e) => ({ ...e })),
        { ordered: false },
      );
    } catch (err) {
      // duplicate event ids (a retried append) are fine; anything else is not
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    for (const accountId of new Set(events.map((e) => e.accountId))) await this.project(accountId);
  }

  async getAccount(accountId: string) {
    return this.accountsCol.findOne({ id: accountId }, { projection: { _id: 0 } });
  }

  async findByKeyId(keyId: string) {
    return this.accountsCol.findOne({ "keys.id": keyId }, { projection: { _id: 0 } });
  }

  async events(accountId: string) {
    return (
      this.eventsCol
        .find({ accountId }, { projection: { _id: 0 } })
        // append order: the driver's ObjectIds increase within an append (event ids need not)
        .sort({ _id: 1 })
        .toArray() as Promise<AccountEvent[]>
    );
  }

  /** Rebuild one account's projection from its events (idempotent). */
  private async project(accountId: string) {
    let account: Account | null = null;
    for (const e of await this.events(accountId)) account = applyAccountEvent(account, e);
    if (account) await this.accountsCol.replaceOne({ id: accountId }, account, { upsert: true });
  }
}
