import type { Db } from "mongodb";
import { isDuplicate } from "../../store/mongo/errors";
import { ensureIndexes } from "../../store/mongo/indexes";
import type { BillingLink, BillingStore } from "./port";

type LinkDoc = Omit<BillingLink, "accountId"> & { _id: string };

/**
 * MongoDB billing store: `billing_links` (one per account, customer id unique),
 * `billing_events` (applied event ids as _id: a second insert fails) and
 * `billing_subscriptions` (the newest applied event's `created` per subscription).
 */
export class MongoBillingStore implements BillingStore {
  constructor(private db: Db) {}

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "billing_links", [
      { key: { customerId: 1 }, unique: true, name: "customerId_unique" },
    ]);
  }

  private get links() {
    return this.db.collection<LinkDoc>("billing_links");
  }

  private static toLink(d: LinkDoc | null): BillingLink | null {
    if (!d) return null;
    const { _id, ...rest } = d;
    return { accountId: _id, ...rest };
  }

  async byAccount(accountId: string) {
    return MongoBillingStore.toLink(await this.links.findOne({ _id: accountId }));
  }

  async byCustomer(customerId: string) {
    return MongoBillingStore.toLink(await this.links.findOne({ customerId }));
  }

  async saveLink(link: BillingLink) {
    const { accountId, ...rest } = link;
    // a customer id names one account: a link it had to another account is moved here
    await this.links.deleteMany({ customerId: link.customerId, _id: { $ne: accountId } });
    await this.links.replaceOne({ _id: accountId }, rest, { upsert: true });
  }

  async claimEvent(eventId: string) {
    try {
      await this.db
        .collection<{ _id: string; at: Date }>("billing_events")
        .insertOne({ _id: eventId, at: new Date() });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  async releaseEvent(eventId: string) {
    await this.db.collection<{ _id: string }>("billing_events").deleteOne({ _id: eventId });
  }

  async advanceSubscription(subscriptionId: string, created: number) {
    try {
      // matches only when the stored one is not newer; else the upsert's insert hits the _id
      await this.db
        .collection<{ _id: string; created: number }>("billing_subscriptions")
        .updateOne(
          { _id: subscriptionId, created: { $lte: created } },
          { $set: { created } },
          { upsert: true },
        );
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }
}
