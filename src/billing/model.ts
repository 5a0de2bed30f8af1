import { t } from "elysia";

export const CheckoutBody = t.Object({
  plan: t.Literal("pro", { description: "The plan to subscribe to; only pro is self-service" }),
});

export const CheckoutResponse = t.Object({
  url: t.String({ description: "Stripe Checkout page to send the user to" }),
  sessionId: t.String({ description: "Stripe Checkout Session id" }),
});

export const PortalResponse = t.Object({
  url: t.String({ description: "Stripe customer portal page to send the user to" }),
});

export const WebhookResponse = t.Object({
  received: t.Literal(true),
  result: t.Union(
    [
      t.Literal("applied"),
      t.Literal("unchanged"),
      t.Literal("duplicate"),
      t.Literal("ignored"),
      t.Literal("stale"),
      t.Literal("unknown_account"),
      t.Literal("managed_account"),
    ],
    {
      description:
        "applied: the account's tier or billing link changed; unchanged: it already had that tier; duplicate: this event id was applied before; ignored: an event type or status billing does not act on; stale: older than an event already applied to the subscription, or about a subscription the account has replaced; unknown_account: no account matches (logged); managed_account: enterprise and internal accounts are never changed by webhooks",
    },
  ),
});
