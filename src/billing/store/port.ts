/**
 * Billing ports: the payment provider (Stripe adapter in ./stripe.ts) and the store of links
 * between accounts and the provider's customers and subscriptions (./embedded.ts,
 * ./mongo.ts).
 */

/** A provider event, already verified and reduced to what billing acts on. */
export type BillingEvent = {
  /** provider event id (each applied at most once) */
  id: string;
  /** provider's creation time, unix seconds (orders events of one subscription) */
  created: number;
  /** provider event type, for logs and responses */
  type: string;
} & (
  | {
      kind: "checkout.completed";
      /** the checkout's client_reference_id: our account id */
      accountId: string | null;
      customerId: string | null;
      subscriptionId: string | null;
    }
  | {
      kind: "subscription.changed";
      customerId: string | null;
      subscriptionId: string;
      /** the tier the subscription's status gives: pro, free, or null for no change */
      tier: "pro" | "free" | null;
      /** provider status, for logs */
      status: string;
      /** account id recorded on the subscription by our checkout (metadata), if any */
      accountId: string | null;
    }
  | { kind: "ignored" }
);

export interface BillingProvider {
  /** a subscription checkout for the pro plan; `customerId` reuses the account's customer */
  createCheckout(input: {
    accountId: string;
    customerId: string | null;
    email: string | null;
    successUrl: string;
    cancelUrl: string;
  }): Promise<{ url: string; sessionId: string }>;
  /** a customer portal session */
  createPortal(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
}

export interface WebhookVerifier {
  /**
   * Verify the signature header over the raw body and parse the event. Throws InvalidSignature
   * for a missing, malformed, wrong or stale signature.
   */
  verify(rawBody: string, signature: string | null): Promise<BillingEvent>;
}

export class InvalidSignature extends Error {}

/** A correctly signed body that is not an event billing can read. */
export class InvalidPayload extends Error {}

/** The provider answered with an error or not at all. */
export class ProviderError extends Error {}

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
