import Stripe from "stripe";
import type { TestApp } from "../support/app";

export const WEBHOOK_SECRET = "whsec_test_0123456789abcdef";

let seq = 0;
/** a fresh Stripe-like id */
export const sid = (prefix: string) => `${prefix}_test${Date.now().toString(36)}${++seq}`;

const nowS = () => Math.floor(Date.now() / 1000);

export function checkoutCompleted(
  accountId: string | null,
  customer: string,
  subscription: string,
  opts: { created?: number; mode?: string; id?: string } = {},
) {
  return {
    id: opts.id ?? sid("evt"),
    object: "event",
    type: "checkout.session.completed",
    created: opts.created ?? nowS(),
    data: {
      object: {
        id: sid("cs"),
        object: "checkout.session",
        mode: opts.mode ?? "subscription",
        client_reference_id: accountId,
        customer,
        subscription,
        payment_status: "paid",
        status: "complete",
      },
    },
  };
}

export function subscriptionEvent(
  type: "created" | "updated" | "deleted",
  subscription: string,
  customer: string,
  status: string,
  opts: { created?: number; id?: string; accountId?: string } = {},
) {
  return {
    id: opts.id ?? sid("evt"),
    object: "event",
    type: `customer.subscription.${type}`,
    created: opts.created ?? nowS(),
    data: {
      object: {
        id: subscription,
        object: "subscription",
        customer,
        status,
        metadata: opts.accountId ? { accountId: opts.accountId } : {},
      },
    },
  };
}

/** POST the event to the webhook, signed as Stripe signs it (or with the header given). */
export async function deliver(
  t: TestApp,
  event: unknown,
  opts: { secret?: string; timestamp?: number; header?: string | null; body?: string } = {},
) {
  const payload = JSON.stringify(event);
  const header =
    opts.header !== undefined
      ? opts.header
      : await Stripe.webhooks.generateTestHeaderStringAsync({
          payload,
          secret: opts.secret ?? WEBHOOK_SECRET,
          timestamp: opts.timestamp,
        });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (header !== null) headers["stripe-signature"] = header;
  return t.req("/v1/billing/webhook", {
    method: "POST",
    headers,
    body: opts.body ?? payload,
  });
}

export async function tierOf(t: TestApp, accountId: string) {
  return (await t.deps.accounts.getAccount(accountId))?.tier;
}

/** A fresh account of the tier: its id and API key. */
export async function account(
  t: TestApp,
  tier: "free" | "pro" | "enterprise" | "internal" = "free",
) {
  const a = await t.deps.accounts.createAccountWithKey({ tier, email: "buyer@example.com" });
  return { id: a.accountId, key: a.apiKey };
}
