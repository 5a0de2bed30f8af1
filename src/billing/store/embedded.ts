import type { Database } from "../../store/embedded/db";
import type { BillingLink, BillingStore } from "./port";

interface LinkRow {
  account_id: string;
  customer_id: string;
  subscription_id: string | null;
  updated_at: string;
}

const link = (r: LinkRow | undefined): BillingLink | null =>
  r
    ? {
        accountId: r.account_id,
        customerId: r.customer_id,
        subscriptionId: r.subscription_id,
        updatedAt: r.updated_at,
      }
    : null;

/**
 * Embedded billing store on the shared SQLite database: `billing_links` (one per account; a
 * customer id names the account whose link was saved last), `billing_events` (claimed provider
 * event ids) and `billing_subscriptions` (the newest event time applied per subscription). Each
 * check-and-set runs in one write transaction, so it is atomic across processes too.
 */
export class EmbeddedBillingStore implements BillingStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS billing_links (
        account_id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL,
        subscription_id TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS billing_links_by_customer ON billing_links (customer_id);
      CREATE TABLE IF NOT EXISTS billing_events (id TEXT PRIMARY KEY) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS billing_subscriptions (
        id TEXT PRIMARY KEY,
        created INTEGER NOT NULL
      ) WITHOUT ROWID;
    `);
  }

  async byAccount(accountId: string) {
    return link(
      this.db.get<LinkRow>("SELECT * FROM billing_links WHERE account_id = ?", accountId),
    );
  }

  async byCustomer(customerId: string) {
    return link(
      this.db.get<LinkRow>(
        "SELECT * FROM billing_links WHERE customer_id = ? ORDER BY rowid DESC LIMIT 1",
        customerId,
      ),
    );
  }

  /** REPLACE deletes and inserts: the saved link gets the highest rowid (see byCustomer) */
  async saveLink(l: BillingLink) {
    this.db.tx(() => this.insertLink(l, "REPLACE"), true);
  }

  private insertLink(l: BillingLink, onConflict: "REPLACE" | "IGNORE") {
    this.db.run(
      `INSERT OR ${onConflict} INTO billing_links (account_id, customer_id, subscription_id, updated_at) VALUES (?, ?, ?, ?)`,
      l.accountId,
      l.customerId,
      l.subscriptionId,
      l.updatedAt,
    );
  }

  /** links, claimed events and subscriptions of an earlier DATA_DIR; stored ones are kept */
  importSync(links: BillingLink[], eventIds: string[], subscriptions: Map<string, number>) {
    this.db.tx(() => {
      for (const l of links) this.insertLink(l, "IGNORE");
      for (const id of eventIds)
        this.db.run("INSERT OR IGNORE INTO billing_events (id) VALUES (?)", id);
      for (const [id, created] of subscriptions)
        this.db.run(
          "INSERT OR IGNORE INTO billing_subscriptions (id, created) VALUES (?, ?)",
          id,
          created,
        );
    }, true);
  }

  async claimEvent(eventId: string) {
    const { changes } = this.db.write(
      "INSERT OR IGNORE INTO billing_events (id) VALUES (?)",
      eventId,
    );
    return changes === 1;
  }

  async releaseEvent(eventId: string) {
    this.db.write("DELETE FROM billing_events WHERE id = ?", eventId);
  }

  async advanceSubscription(subscriptionId: string, created: number) {
    return this.db.tx(() => {
      const last = this.db.get<{ created: number }>(
        "SELECT created FROM billing_subscriptions WHERE id = ?",
        subscriptionId,
      )?.created;
      if (last !== undefined && last > created) return false;
      if (last !== created)
        this.db.run(
          "INSERT OR REPLACE INTO billing_subscriptions (id, created) VALUES (?, ?)",
          subscriptionId,
          created,
        );
      return true;
    }, true);
  }
}
