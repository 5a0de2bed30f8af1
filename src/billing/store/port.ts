/**
 * The billing store's port: links between accounts and the provider's customers and
 * subscriptions, and the provider events applied. Adapters: ./embedded.ts, ./mongo.ts.
 */

export interface BillingLink {
  accountId: string;
  customerId: string;
  /** the subscription the account pays with now (null before one is known) */
  subscriptionId: string | null;
  updatedAt: string;
}

export interface BillingStore {
  byAccount(accountId: string): Promise<BillingLink | null>;
  byCustomer(customerId: string): Promise<BillingLink | null>;
  /** create or replace the account's link (one per account; a customer id names one account) */
  saveLink(link: BillingLink): Promise<void>;
  /** record an event id as being applied; false when it was recorded before (a redelivery) */
  claimEvent(eventId: string): Promise<boolean>;
  /** forget a claimed event whose application failed, so the provider's retry applies it */
  releaseEvent(eventId: string): Promise<void>;
  /**
   * Record `created` as the newest event applied to the subscription, unless a newer one was
   * applied already: then nothing changes and the answer is false (the event is out of date).
   */
  advanceSubscription(subscriptionId: string, created: number): Promise<boolean>;
}
