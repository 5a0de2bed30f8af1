import type { Account } from "../accounts/model";
import type { AccountService } from "../accounts/service";
import {
  conflict,
  providerFailed,
  unauthenticated,
  unavailable,
  unusable,
} from "../platform/domain-errors";
import { log } from "../platform/log";
import {
  type BillingEvent,
  type BillingProvider,
  InvalidPayload,
  InvalidSignature,
  ProviderError,
  type WebhookVerifier,
} from "./provider";
import type { BillingStore } from "./store/port";

/** What a webhook delivery did (the webhook's response body names it). */
export type WebhookResult =
  /** the account's tier or billing link changed */
  | "applied"
  /** the event was read but the account already had that tier */
  | "unchanged"
  /** this event id was applied before (a redelivery) */
  | "duplicate"
  /** an event type or status billing does not act on */
  | "ignored"
  /** older than an event already applied to the subscription, or for a replaced subscription */
  | "stale"
  /** no account matches the event (logged) */
  | "unknown_account"
  /** an enterprise or internal account: webhooks never change it */
  | "managed_account";

const MANAGED = new Set(["enterprise", "internal"]);

const notConfigured = () =>
  unavailable(
    "billing_not_configured",
    "Billing is not configured on this server (no Stripe credentials).",
  );

const providerDown = () =>
  providerFailed("billing_provider_error", "The payment provider did not answer; try again.");

/**
 * Checkout and portal sessions for an account, and the provider's webhook events applied to
 * accounts: tier changes go through AccountService (an account event, as the admin route's).
 */
export class BillingService {
  constructor(
    private deps: {
      accounts: AccountService;
      store: BillingStore;
      /** null when STRIPE_SECRET_KEY is not set */
      provider: BillingProvider | null;
      /** null when STRIPE_WEBHOOK_SECRET is not set */
      verifier: WebhookVerifier | null;
      /** PUBLIC_URL, no trailing slash */
      publicUrl: string;
    },
  ) {}

  async checkout(accountId: string): Promise<{ url: string; sessionId: string }> {
    const provider = this.deps.provider;
    if (!provider) throw notConfigured();
    const account = await this.requireAccount(accountId);
    if (MANAGED.has(account.tier))
      throw conflict(
        "managed_plan",
        `The ${account.tier} plan is managed by the operator, not through self-service billing.`,
      );
    if (account.tier === "pro")
      throw conflict("already_subscribed", "This account is already on the pro plan.");
    const link = await this.deps.store.byAccount(accountId);
    const base = this.deps.publicUrl;
    try {
      return await provider.createCheckout({
        accountId,
        customerId: link?.customerId ?? null,
        email: await this.deps.accounts.emailOf(account),
        successUrl: `${base}/?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancelUrl: `${base}/?checkout=cancelled`,
      });
    } catch (err) {
      throw this.providerFailure(err, "checkout");
    }
  }

  async portal(accountId: string): Promise<{ url: string }> {
    const provider = this.deps.provider;
    if (!provider) throw notConfigured();
    const link = await this.deps.store.byAccount(accountId);
    if (!link)
      throw conflict(
        "no_billing_account",
        "This account has no billing account yet; subscribe through POST /v1/billing/checkout first.",
      );
    try {
      return await provider.createPortal({
        customerId: link.customerId,
        returnUrl: `${this.deps.publicUrl}/`,
      });
    } catch (err) {
      throw this.providerFailure(err, "portal");
    }
  }

  /** Verify and apply one webhook delivery. */
  async webhook(rawBody: string, signature: string | null): Promise<WebhookResult> {
    const verifier = this.deps.verifier;
    if (!verifier) throw notConfigured();
    let event: BillingEvent;
    try {
      event = await verifier.verify(rawBody, signature);
    } catch (err) {
      if (err instanceof InvalidSignature)
        throw unusable(
          "invalid_signature",
          "Missing, malformed, wrong, expired or future-dated Stripe-Signature header.",
        );
      if (err instanceof InvalidPayload)
        throw unusable("invalid_payload", "The signed body is not a Stripe event.");
      throw err;
    }
    if (event.kind === "ignored") return "ignored";
    if (!(await this.deps.store.claimEvent(event.id))) return "duplicate";
    let result: WebhookResult;
    try {
      result = await this.apply(event);
    } catch (err) {
      // not applied: forget the claim so the provider's retry applies it
      await this.deps.store.releaseEvent(event.id).catch(() => {});
      throw err;
    }
    log(result === "unknown_account" ? "warn" : "info", "billing webhook", {
      eventId: event.id,
      type: event.type,
      result,
    });
    return result;
  }

  private async apply(event: Exclude<BillingEvent, { kind: "ignored" }>): Promise<WebhookResult> {
    const { store } = this.deps;
    if (event.kind === "checkout.completed") {
      const account = event.accountId ? await this.deps.accounts.getAccount(event.accountId) : null;
      if (!account) return "unknown_account";
      if (MANAGED.has(account.tier)) return "managed_account";
      if (event.customerId)
        await store.saveLink({
          accountId: account.id,
          customerId: event.customerId,
          subscriptionId: event.subscriptionId,
          updatedAt: new Date().toISOString(),
        });
      if (
        event.subscriptionId &&
        !(await store.advanceSubscription(event.subscriptionId, event.created))
      )
        return "stale";
      return this.setTier(account, "pro");
    }
    // a subscription event: the account is the one checkout linked to the customer (or, when
    // this event arrives before checkout's, the one our checkout wrote into its metadata)
    const link = event.customerId ? await store.byCustomer(event.customerId) : null;
    const accountId = link?.accountId ?? event.accountId;
    const account = accountId ? await this.deps.accounts.getAccount(accountId) : null;
    if (!account) return "unknown_account";
    if (MANAGED.has(account.tier)) return "managed_account";
    const current = link?.subscriptionId ?? null;
    if (current && current !== event.subscriptionId && event.tier !== "pro") return "stale"; // a subscription the account has replaced cannot take pro away
    if (!(await store.advanceSubscription(event.subscriptionId, event.created))) return "stale";
    if (event.customerId && (!link || current !== event.subscriptionId) && event.tier === "pro")
      await store.saveLink({
        accountId: account.id,
        customerId: event.customerId,
        subscriptionId: event.subscriptionId,
        updatedAt: new Date().toISOString(),
      });
    if (!event.tier) return "ignored";
    return this.setTier(account, event.tier);
  }

  private async setTier(account: Account, tier: "pro" | "free"): Promise<WebhookResult> {
    if (account.tier === tier) return "unchanged";
    await this.deps.accounts.changeTier(account.id, tier, null);
    return "applied";
  }

  private async requireAccount(accountId: string): Promise<Account> {
    const account = await this.deps.accounts.getAccount(accountId);
    if (!account) throw unauthenticated("invalid_api_key", "Unknown account.");
    return account;
  }

  private providerFailure(err: unknown, what: string): unknown {
    if (!(err instanceof ProviderError)) return err;
    log("error", `billing ${what} failed`, { error: err.message });
    return providerDown();
  }
}
