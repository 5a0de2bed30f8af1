import Stripe from "stripe";
import {
  type BillingEvent,
  type BillingProvider,
  InvalidPayload,
  InvalidSignature,
  ProviderError,
  type WebhookVerifier,
} from "./provider";

/** Stripe allows a signature this old (seconds); older ones are replays. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Subscription statuses that make an account pro, and those that make it free again. */
const PRO_STATUSES = new Set(["active", "trialing", "past_due"]);
const FREE_STATUSES = new Set(["canceled", "unpaid", "incomplete_expired", "paused"]);

/** `STRIPE_API_BASE` (e.g. http://127.0.0.1:12111 for stripe-mock) as the SDK's host options. */
function hostOptions(apiBase: string | undefined) {
  if (!apiBase) return {};
  const u = new URL(apiBase);
  const protocol = u.protocol === "http:" ? ("http" as const) : ("https" as const);
  return {
    host: u.hostname,
    port: u.port || (protocol === "http" ? "80" : "443"),
    protocol,
  };
}

/** An id field that Stripe sends either as an id or as the expanded object. */
function idOf(v: unknown): string | null {
  if (typeof v === "string" && v) return v;
  if (v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string")
    return (v as { id: string }).id;
  return null;
}

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/** Checkout and portal sessions through the official SDK. */
export class StripeBilling implements BillingProvider {
  private stripe: Stripe;

  constructor(opts: { secretKey: string; pricePro: string; apiBase?: string }) {
    this.pricePro = opts.pricePro;
    this.stripe = new Stripe(opts.secretKey, {
      ...hostOptions(opts.apiBase),
      maxNetworkRetries: 1,
      timeout: 15_000,
    });
  }

  private pricePro: string;

  async createCheckout(input: {
    accountId: string;
    customerId: string | null;
    email: string | null;
    successUrl: string;
    cancelUrl: string;
  }) {
    const s = await this.call(() =>
      this.stripe.checkout.sessions.create({
        mode: "subscription",
        line_items: [{ price: this.pricePro, quantity: 1 }],
        client_reference_id: input.accountId,
        // the customer checkout linked earlier is reused; a new one gets the account's e-mail
        ...(input.customerId
          ? { customer: input.customerId }
          : input.email
            ? { customer_email: input.email }
            : {}),
        // lets subscription events find the account even before checkout's event has arrived
        subscription_data: { metadata: { accountId: input.accountId } },
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
      }),
    );
    if (!s.url) throw new ProviderError("checkout session without a url");
    return { url: s.url, sessionId: s.id };
  }

  async createPortal(input: { customerId: string; returnUrl: string }) {
    const s = await this.call(() =>
      this.stripe.billingPortal.sessions.create({
        customer: input.customerId,
        return_url: input.returnUrl,
      }),
    );
    return { url: s.url };
  }

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw new ProviderError(err instanceof Error ? err.message : String(err));
    }
  }
}

/** Stripe-Signature verification (async, web crypto: Bun and Deno) and event reduction. */
export class StripeWebhookVerifier implements WebhookVerifier {
  constructor(private secret: string) {}

  async verify(rawBody: string, signature: string | null): Promise<BillingEvent> {
    if (!signature) throw new InvalidSignature("no Stripe-Signature header");
    let event: Stripe.Event;
    try {
      event = await Stripe.webhooks.constructEventAsync(
        rawBody,
        signature,
        this.secret,
        SIGNATURE_TOLERANCE_SECONDS,
      );
    } catch (err) {
      // the signature matched but the body is not JSON
      if (err instanceof SyntaxError) throw new InvalidPayload("body is not JSON");
      throw new InvalidSignature(err instanceof Error ? err.message : String(err));
    }
    // Stripe's check only bounds the age; a signature dated ahead of the clock by more than
    // the tolerance is refused too (a clock that far off, or a signature made to outlive it)
    const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
    if (signedAt - Date.now() / 1000 > SIGNATURE_TOLERANCE_SECONDS)
      throw new InvalidSignature("Timestamp is in the future, outside the tolerance zone");
    return reduceEvent(event as unknown as RawEvent);
  }
}

interface RawEvent {
  id: string;
  type: string;
  created: number;
  data?: { object?: Record<string, unknown> };
}

/** What billing acts on in a (verified) Stripe event. */
export function reduceEvent(e: RawEvent): BillingEvent {
  if (typeof e?.id !== "string" || typeof e.type !== "string" || typeof e.created !== "number")
    throw new InvalidPayload("not a Stripe event");
  const base = { id: e.id, type: e.type, created: e.created };
  const o = e.data?.object ?? {};
  if (e.type === "checkout.session.completed") {
    if (o.mode !== "subscription") return { ...base, kind: "ignored" };
    return {
      ...base,
      kind: "checkout.completed",
      accountId: str(o.client_reference_id),
      customerId: idOf(o.customer),
      subscriptionId: idOf(o.subscription),
    };
  }
  if (
    e.type === "customer.subscription.created" ||
    e.type === "customer.subscription.updated" ||
    e.type === "customer.subscription.deleted"
  ) {
    const subscriptionId = idOf(o);
    if (!subscriptionId) return { ...base, kind: "ignored" };
    const status = str(o.status) ?? "unknown";
    const tier =
      e.type === "customer.subscription.deleted" || FREE_STATUSES.has(status)
        ? "free"
        : PRO_STATUSES.has(status)
          ? "pro"
          : null;
    const metadata = (o.metadata ?? {}) as Record<string, unknown>;
    return {
      ...base,
      kind: "subscription.changed",
      customerId: idOf(o.customer),
      subscriptionId,
      tier,
      status,
      accountId: str(metadata.accountId),
    };
  }
  return { ...base, kind: "ignored" };
}
