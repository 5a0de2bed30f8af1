import { randomBytes } from "node:crypto";
import type { Db } from "mongodb";
import { isDuplicate } from "../../store/mongo/errors";
import { ensureIndexes } from "../../store/mongo/indexes";
import { type Account, type AccountEvent, applyAccountEvent } from "../model";
import type { AccountStore, DataKeyRecord, TokenRecord, TokenStore } from "./port";

/**
 * MongoDB account store: `account_events` is the append-only log (unique event id, so a
 * replay is idempotent); `accounts` is its projection, updated after each append.
 * `account_keys` holds each account's data key and e-mail index outside the log (deleted with the
 * account: crypto-shredding); `server_secrets` holds shared random secrets.
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
      { key: { "publishableKeys.id": 1 }, sparse: true, name: "publishable_key_id" },
      { key: { email: 1 }, sparse: true, name: "email" },
    ]);
    await ensureIndexes(db, "account_keys", [
      { key: { accountId: 1 }, unique: true, name: "account_unique" },
      // sparse: accounts without an index store no emailIndex field (see putDataKey)
      { key: { emailIndex: 1 }, unique: true, sparse: true, name: "email_index_unique" },
    ]);
    await ensureIndexes(db, "server_secrets", [
      { key: { name: 1 }, unique: true, name: "name_unique" },
    ]);
    await ensureIndexes(db, "auth_tokens", [
      { key: { hash: 1 }, unique: true, name: "hash_unique" },
      { key: { family: 1 }, name: "family" },
      { key: { accountId: 1 }, name: "account" },
    ]);
    await ensureIndexes(db, "auth_token_uses", [{ key: { accountId: 1 }, name: "account" }]);
  }

  private get keysCol() {
    return this.db.collection<Omit<DataKeyRecord, "emailIndex"> & { emailIndex?: string | null }>(
      "account_keys",
    );
  }

  async putDataKey(record: DataKeyRecord): Promise<boolean> {
    try {
      const { emailIndex, ...rest } = record;
      await this.keysCol.insertOne(emailIndex ? { ...rest, emailIndex } : rest);
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  async getDataKey(accountId: string): Promise<DataKeyRecord | null> {
    const r = await this.keysCol.findOne({ accountId }, { projection: { _id: 0 } });
    return r ? { accountId: r.accountId, key: r.key, emailIndex: r.emailIndex ?? null } : null;
  }

  async findByEmailIndex(emailIndex: string) {
    return (await this.keysCol.findOne({ emailIndex }))?.accountId ?? null;
  }

  async deleteDataKey(accountId: string) {
    await this.keysCol.deleteOne({ accountId });
  }

  async serverSecret(name: string): Promise<string> {
    const col = this.db.collection<{ name: string; value: string }>("server_secrets");
    try {
      await col.insertOne({ name, value: randomBytes(32).toString("base64url") });
    } catch (err) {
      if (!isDuplicate(err)) throw err; // another instance made it first: use theirs
    }
    return ((await col.findOne({ name })) as { value: string }).value;
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
      if (!isDuplicate(err)) throw err;
    }
    for (const accountId of new Set(events.map((e) => e.accountId))) await this.project(accountId);
  }

  async getAccount(accountId: string) {
    return this.accountsCol.findOne({ id: accountId }, { projection: { _id: 0 } });
  }

  async findByKeyId(keyId: string) {
    return this.accountsCol.findOne({ "keys.id": keyId }, { projection: { _id: 0 } });
  }

  async findByPublishableKeyId(keyId: string) {
    return this.accountsCol.findOne({ "publishableKeys.id": keyId }, { projection: { _id: 0 } });
  }

  async listAccounts(query: { limit: number }) {
    const cursor = this.accountsCol
      .find({}, { projection: { _id: 0 } })
      .sort({ createdAt: 1, id: 1 });
    return (Number.isFinite(query.limit) ? cursor.limit(query.limit) : cursor).toArray();
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

/**
 * MongoDB token store: `auth_tokens`, one document per token hash, and `auth_token_uses`, one
 * document per used token (`_id` the hash). Using a token inserts its use: the unique `_id`
 * lets exactly one of several concurrent uses win, also on servers whose conditional updates
 * are not atomic (FerretDB v1 reads, then writes).
 */
export class MongoTokenStore implements TokenStore {
  constructor(private db: Db) {}

  private get col() {
    return this.db.collection<TokenRecord>("auth_tokens");
  }
  private get uses() {
    return this.db.collection<{ _id: string; accountId: string; at: number }>("auth_token_uses");
  }

  async put(record: TokenRecord) {
    await this.col.insertOne({ ...record });
  }

  async get(hash: string) {
    return this.col.findOne({ hash }, { projection: { _id: 0 } });
  }

  async use(hash: string, at: number) {
    const r = await this.col.findOne({ hash }, { projection: { _id: 0 } });
    if (!r || r.usedAt !== null || r.revokedAt !== null) return false;
    try {
      await this.uses.insertOne({ _id: hash, accountId: r.accountId, at });
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
    await this.col.updateOne({ hash }, { $set: { usedAt: at } });
    return true;
  }

  async revokeFamily(family: string, at: number) {
    await this.col.updateMany({ family, revokedAt: null }, { $set: { revokedAt: at } });
  }

  async removeAccount(accountId: string) {
    await this.col.deleteMany({ accountId });
    await this.uses.deleteMany({ accountId });
  }
}
