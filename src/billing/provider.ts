/**
 * The payment provider's port: checkout and portal sessions, and its webhook events verified
 * and reduced to what billing acts on. Adapter: ./stripe.ts.
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
