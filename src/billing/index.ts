import { Elysia } from "elysia";
import { type AuthDeps, authPlugin } from "../guard";
import { ApiError, ErrorBody } from "../http/errors";
import { CheckoutBody, CheckoutResponse, PortalResponse, WebhookResponse } from "./model";
import type { BillingService } from "./service";

/** Largest webhook body read (Stripe events are a few KiB). */
const MAX_WEBHOOK_BYTES = 512 * 1024;

/** POST /v1/billing/checkout, /portal (X-API-Key or Bearer) and /webhook (Stripe-Signature). */
export function billingController(deps: AuthDeps & { billing: BillingService }) {
  return new Elysia({ prefix: "/v1/billing", tags: ["billing"] })
    .use(authPlugin(deps))
    .post(
      "/checkout",
      ({ principal, set }) => {
        set.headers["cache-control"] = "no-store";
        return deps.billing.checkout(principal.accountId);
      },
      {
        keyOrBearer: true,
        body: CheckoutBody,
        response: {
          200: CheckoutResponse,
          401: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
          502: ErrorBody,
          503: ErrorBody,
        },
        detail: {
          summary: "Start a pro subscription (Stripe Checkout)",
          description:
            'Body {"plan": "pro"}. Answers the url of a Stripe Checkout Session (subscription mode) whose client_reference_id is the account id; the Stripe customer of an earlier subscription is reused. The account turns pro when Stripe reports the completed checkout to the webhook. ' +
            "409 already_subscribed for a pro account; 409 managed_plan for enterprise and internal accounts; 503 billing_not_configured without STRIPE_SECRET_KEY; 502 billing_provider_error when Stripe does not answer.",
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    )
    .post(
      "/portal",
      ({ principal, set }) => {
        set.headers["cache-control"] = "no-store";
        return deps.billing.portal(principal.accountId);
      },
      {
        keyOrBearer: true,
        response: {
          200: PortalResponse,
          401: ErrorBody,
          409: ErrorBody,
          502: ErrorBody,
          503: ErrorBody,
        },
        detail: {
          summary: "Open the Stripe customer portal",
          description:
            "Answers the url of a Stripe customer portal session (manage or cancel the subscription, invoices, payment methods). No body. " +
            "409 no_billing_account when the account has no Stripe customer yet (it never completed a checkout); 503 billing_not_configured without STRIPE_SECRET_KEY; 502 billing_provider_error when Stripe does not answer.",
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    )
    .post(
      "/webhook",
      async ({ request }) => {
        if (Number(request.headers.get("content-length")) > MAX_WEBHOOK_BYTES)
          throw new ApiError(413, "payload_too_large", "Webhook body too large.");
        // the signature covers the exact bytes Stripe sent: read them unparsed
        const raw = await request.text();
        const result = await deps.billing.webhook(raw, request.headers.get("stripe-signature"));
        return { received: true as const, result };
      },
      {
        parse: "none",
        response: { 200: WebhookResponse, 400: ErrorBody, 413: ErrorBody, 503: ErrorBody },
        detail: {
          summary: "Stripe webhook endpoint",
          parameters: [
            {
              name: "Stripe-Signature",
              in: "header",
              required: true,
              description: "Stripe's signature of the raw body (t=<unix time>,v1=<HMAC-SHA256>)",
              schema: { type: "string" },
            },
          ],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { type: "object", description: "A Stripe event, as Stripe sent it" },
              },
            },
          },
          description:
            "No API key: the Stripe-Signature header is verified over the raw body with STRIPE_WEBHOOK_SECRET (its timestamp within 300 s of the server clock, either way). A missing, malformed, wrong, stale or future-dated signature is 400 invalid_signature and changes nothing. " +
            "Handled: checkout.session.completed (subscription mode: links the customer and subscription to the account named by client_reference_id and makes it pro); customer.subscription.created and .updated (status active, trialing or past_due: pro; canceled, unpaid, incomplete_expired or paused: free; others: no change); customer.subscription.deleted (free). " +
            "Each event id is applied once; an event older than one already applied to the same subscription changes nothing; other event types answer 200 ignored; an event for no known account answers 200 unknown_account (logged). Enterprise and internal accounts are never changed. " +
            "503 billing_not_configured without STRIPE_WEBHOOK_SECRET.",
          security: [],
        },
      },
    );
}
