import { join } from "node:path";
import type { BillingLink, BillingStore } from "../../billing/port";
import { JsonlLog } from "./jsonl";

type BillingRecord =
  | ({ type: "link" } & BillingLink)
  | { type: "event"; id: string }
  | { type: "event.released"; id: string }
  | { type: "subscription"; id: string; created: number };

/**
 * Embedded billing store: every change appended to DATA_DIR/billing.jsonl (fdatasync'd before
 * it is acknowledged) and replayed into memory at start. One process owns DATA_DIR, so the
 * check-and-set operations are atomic here (JavaScript runs them without interleaving).
 */
export class EmbeddedBillingStore implements BillingStore {
  private log: JsonlLog<BillingRecord>;
  private links = new Map<string, BillingLink>();
  private customers = new Map<string, string>();
  private events = new Set<string>();
  private subscriptions = new Map<string, number>();

  constructor(dataDir: string) {
    this.log = new JsonlLog(join(dataDir, "billing.jsonl"));
    for (const r of this.log.readAll()) this.apply(r);
  }

  private apply(r: BillingRecord) {
    switch (r.type) {
      case "link": {
        const { type, ...link } = r;
        const before = this.links.get(link.accountId);
        if (before) this.customers.delete(before.customerId);
        this.links.set(link.accountId, link);
        this.customers.set(link.customerId, link.accountId);
        break;
      }
      case "event":
        this.events.add(r.id);
        break;
      case "event.released":
        this.events.delete(r.id);
        break;
      case "subscription":
        this.subscriptions.set(r.id, r.created);
        break;
    }
  }

  private write(r: BillingRecord) {
    this.log.append([r]);
    this.apply(r);
  }

  async byAccount(accountId: string) {
    return this.links.get(accountId) ?? null;
  }

  async byCustomer(customerId: string) {
    const accountId = this.customers.get(customerId);
    return accountId ? (this.links.get(accountId) ?? null) : null;
  }

  async saveLink(link: BillingLink) {
    this.write({ type: "link", ...link });
  }

  async claimEvent(eventId: string) {
    if (this.events.has(eventId)) return false;
    this.write({ type: "event", id: eventId });
    return true;
  }

  async releaseEvent(eventId: string) {
    if (this.events.has(eventId)) this.write({ type: "event.released", id: eventId });
  }

  async advanceSubscription(subscriptionId: string, created: number) {
    const last = this.subscriptions.get(subscriptionId);
    if (last !== undefined && last > created) return false;
    if (last !== created) this.write({ type: "subscription", id: subscriptionId, created });
    return true;
  }

  close() {
    this.log.close();
  }
}
