import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { buildDeps, openEmbeddedStore } from "../../src/deps";
import { makeApp, type TestApp, tempDir, testConfig } from "../support/app";
import {
  account,
  checkoutCompleted,
  deliver,
  sid,
  subscriptionEvent,
  tierOf,
  WEBHOOK_SECRET,
} from "./util";

// each test builds an app or starts a server: allow for a loaded machine
setDefaultTimeout(30_000);

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
});
afterAll(() => t.close());

const json = async (r: Response) => (await r.json()) as Record<string, unknown>;

describe("webhook signature", () => {
  test("missing, malformed, wrong, stale and tampered signatures are 400 and change nothing", async () => {
    const a = await account(t);
    const event = checkoutCompleted(a.id, sid("cus"), sid("sub"));
    const now = Math.floor(Date.now() / 1000);
    const payload = JSON.stringify(event);
    const bad = [
      await deliver(t, event, { header: null }),
      await deliver(t, event, { header: "not-a-signature" }),
      await deliver(t, event, { header: `t=${now},v1=${"0".repeat(64)}` }),
      await deliver(t, event, { secret: "whsec_someone_else" }),
      await deliver(t, event, { timestamp: now - 301 }),
      // correctly signed, dated beyond the tolerance ahead of the clock (the clock is read
      // when it is sent: `now` may be a second behind the server's by then)
      await deliver(t, event, { timestamp: Math.floor(Date.now() / 1000) + 302 }),
      await deliver(t, event, { timestamp: now + 86_400 }),
      // signed for one body, sent with another
      await deliver(t, event, { body: payload.replace('"paid"', '"unpaid"') }),
    ];
    for (const r of bad) {
      expect(r.status).toBe(400);
      expect(await json(r)).toEqual({
        error: "invalid_signature",
        message: expect.stringContaining("Stripe-Signature"),
      });
    }
    expect(await tierOf(t, a.id)).toBe("free");
    expect(await t.deps.store.billing.byAccount(a.id)).toBeNull();
    // the event id was not recorded: the same event, correctly signed, is applied
    const ok = await deliver(t, event);
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ received: true, result: "applied" });
    expect(await tierOf(t, a.id)).toBe("pro");
  });

  test.each([-290, 290])(
    "a signature %i s off the clock (within the 300 s tolerance) is accepted",
    async (skew) => {
      const a = await account(t);
      const r = await deliver(t, checkoutCompleted(a.id, sid("cus"), sid("sub")), {
        timestamp: Math.floor(Date.now() / 1000) + skew,
      });
      expect(r.status).toBe(200);
      expect(await tierOf(t, a.id)).toBe("pro");
    },
  );

  test("a body over 512 KiB is 413 and is not read", async () => {
    const r = await t.req("/v1/billing/webhook", {
      method: "POST",
      headers: { "stripe-signature": "t=1,v1=00", "content-length": String(600 * 1024) },
      body: "x".repeat(600 * 1024),
    });
    expect(r.status).toBe(413);
    expect((await json(r)).error).toBe("payload_too_large");
  });

  test("a correctly signed body that is not an event is 400 invalid_payload", async () => {
    const r = await deliver(t, { hello: "world" });
    expect(r.status).toBe(400);
    expect((await json(r)).error).toBe("invalid_payload");
  });
});

describe("webhook events", () => {
  test("checkout.session.completed links customer and subscription and makes the account pro, seen by GET /v1/usage", async () => {
    const a = await account(t);
    expect((await json(await t.get("/v1/usage", a.key))).tier).toBe("free");
    const customer = sid("cus");
    const subscription = sid("sub");
    const r = await deliver(t, checkoutCompleted(a.id, customer, subscription));
    expect(await json(r)).toEqual({ received: true, result: "applied" });
    expect(await t.deps.store.billing.byAccount(a.id)).toMatchObject({
      accountId: a.id,
      customerId: customer,
      subscriptionId: subscription,
    });
    expect((await json(await t.get("/v1/usage", a.key))).tier).toBe("pro");
    // the change is an account event, like the admin route's
    const events = await t.deps.store.accounts.events(a.id);
    expect(events.at(-1)).toMatchObject({ type: "tier.changed", data: { tier: "pro" } });
  });

  test("checkout in payment mode is ignored", async () => {
    const a = await account(t);
    const r = await deliver(
      t,
      checkoutCompleted(a.id, sid("cus"), sid("sub"), { mode: "payment" }),
    );
    expect(await json(r)).toEqual({ received: true, result: "ignored" });
    expect(await tierOf(t, a.id)).toBe("free");
  });

  test.each([
    ["created", "active", "pro"],
    ["created", "trialing", "pro"],
    ["updated", "past_due", "pro"],
    ["updated", "canceled", "free"],
    ["updated", "unpaid", "free"],
    ["updated", "incomplete_expired", "free"],
    ["deleted", "canceled", "free"],
  ] as const)("customer.subscription.%s with status %s -> %s", async (type, status, tier) => {
    const a = await account(t);
    const customer = sid("cus");
    const subscription = sid("sub");
    const start = Math.floor(Date.now() / 1000) - 100;
    await deliver(t, checkoutCompleted(a.id, customer, subscription, { created: start }));
    // from pro to the status's tier, and (for pro statuses) from free to pro
    if (tier === "pro") await t.deps.accounts.changeTier(a.id, "free", null);
    const r = await deliver(t, subscriptionEvent(type, subscription, customer, status));
    expect(await json(r)).toEqual({ received: true, result: "applied" });
    expect(await tierOf(t, a.id)).toBe(tier);
    expect((await json(await t.get("/v1/usage", a.key))).tier).toBe(tier);
  });

  test("a status that decides nothing (incomplete) leaves the tier", async () => {
    const a = await account(t);
    const customer = sid("cus");
    const sub = sid("sub");
    await deliver(t, checkoutCompleted(a.id, customer, sub, { created: 1000 }));
    const r = await deliver(
      t,
      subscriptionEvent("updated", sub, customer, "incomplete", { created: 1001 }),
    );
    expect(await json(r)).toEqual({ received: true, result: "ignored" });
    expect(await tierOf(t, a.id)).toBe("pro");
  });

  test("a redelivered event answers 200 duplicate and changes nothing", async () => {
    const a = await account(t);
    const customer = sid("cus");
    const sub = sid("sub");
    const completed = checkoutCompleted(a.id, customer, sub, { created: 1000 });
    expect((await json(await deliver(t, completed))).result).toBe("applied");
    const deleted = subscriptionEvent("deleted", sub, customer, "canceled", { created: 2000 });
    expect((await json(await deliver(t, deleted))).result).toBe("applied");
    expect(await tierOf(t, a.id)).toBe("free");
    const before = (await t.deps.store.accounts.events(a.id)).length;
    for (const e of [completed, deleted, completed]) {
      const r = await deliver(t, e);
      expect(r.status).toBe(200);
      expect(await json(r)).toEqual({ received: true, result: "duplicate" });
    }
    expect(await tierOf(t, a.id)).toBe("free");
    expect((await t.deps.store.accounts.events(a.id)).length).toBe(before);
  });

  test("an older event arriving after a newer one does not roll the tier back", async () => {
    const a = await account(t);
    const customer = sid("cus");
    const sub = sid("sub");
    await deliver(t, checkoutCompleted(a.id, customer, sub, { created: 1000 }));
    const canceled = subscriptionEvent("updated", sub, customer, "canceled", { created: 1200 });
    const active = subscriptionEvent("updated", sub, customer, "active", { created: 1100 });
    expect((await json(await deliver(t, canceled))).result).toBe("applied");
    const r = await deliver(t, active);
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ received: true, result: "stale" });
    expect(await tierOf(t, a.id)).toBe("free");
    // and the other way round: a late cancellation of an older state does not take pro away
    const renewed = subscriptionEvent("updated", sub, customer, "active", { created: 1300 });
    expect((await json(await deliver(t, renewed))).result).toBe("applied");
    const lateCancel = subscriptionEvent("updated", sub, customer, "unpaid", { created: 1250 });
    expect((await json(await deliver(t, lateCancel))).result).toBe("stale");
    expect(await tierOf(t, a.id)).toBe("pro");
  });

  test("events of a subscription the account replaced cannot take pro away", async () => {
    const a = await account(t);
    const customer = sid("cus");
    const oldSub = sid("sub");
    const newSub = sid("sub");
    await deliver(t, checkoutCompleted(a.id, customer, oldSub, { created: 1000 }));
    await deliver(t, subscriptionEvent("deleted", oldSub, customer, "canceled", { created: 1100 }));
    await deliver(t, checkoutCompleted(a.id, customer, newSub, { created: 1200 }));
    expect(await tierOf(t, a.id)).toBe("pro");
    const late = subscriptionEvent("updated", oldSub, customer, "canceled", { created: 1300 });
    expect((await json(await deliver(t, late))).result).toBe("stale");
    expect(await tierOf(t, a.id)).toBe("pro");
  });

  test("a subscription event before checkout's finds the account through the checkout's metadata", async () => {
    const a = await account(t);
    const customer = sid("cus");
    const sub = sid("sub");
    const created = subscriptionEvent("created", sub, customer, "active", { accountId: a.id });
    expect((await json(await deliver(t, created))).result).toBe("applied");
    expect(await tierOf(t, a.id)).toBe("pro");
    expect((await t.deps.store.billing.byCustomer(customer))?.accountId).toBe(a.id);
    const completed = checkoutCompleted(a.id, customer, sub);
    expect((await json(await deliver(t, completed))).result).toBe("unchanged");
  });

  test("unknown event types answer 200 ignored", async () => {
    const r = await deliver(t, {
      id: sid("evt"),
      object: "event",
      type: "invoice.paid",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: sid("in"), object: "invoice" } },
    });
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ received: true, result: "ignored" });
  });

  test("an event for no known account answers 200 unknown_account and changes nothing", async () => {
    const missing = await deliver(
      t,
      checkoutCompleted("01999999-0000-7000-8000-000000000000", sid("cus"), sid("sub")),
    );
    expect(missing.status).toBe(200);
    expect(await json(missing)).toEqual({ received: true, result: "unknown_account" });
    const noRef = await deliver(t, checkoutCompleted(null, sid("cus"), sid("sub")));
    expect(await json(noRef)).toEqual({ received: true, result: "unknown_account" });
    const customer = sid("cus");
    const sub = await deliver(t, subscriptionEvent("deleted", sid("sub"), customer, "canceled"));
    expect(await json(sub)).toEqual({ received: true, result: "unknown_account" });
    expect(await t.deps.store.billing.byCustomer(customer)).toBeNull();
  });

  test("enterprise and internal accounts are never changed by webhooks", async () => {
    for (const tier of ["enterprise", "internal"] as const) {
      const a = await account(t, tier);
      const customer = sid("cus");
      const sub = sid("sub");
      const r = await deliver(t, checkoutCompleted(a.id, customer, sub));
      expect(await json(r)).toEqual({ received: true, result: "managed_account" });
      expect(await tierOf(t, a.id)).toBe(tier);
      const del = await deliver(
        t,
        subscriptionEvent("deleted", sub, customer, "canceled", { accountId: a.id }),
      );
      expect(await json(del)).toEqual({ received: true, result: "managed_account" });
      expect(await tierOf(t, a.id)).toBe(tier);
    }
  });
});

describe("webhook configuration and persistence", () => {
  test("without STRIPE_WEBHOOK_SECRET the webhook is 503 billing_not_configured", async () => {
    const bare = await makeApp();
    try {
      const r = await deliver(bare, checkoutCompleted(null, "cus_x", "sub_x"));
      expect(r.status).toBe(503);
      expect((await json(r)).error).toBe("billing_not_configured");
    } finally {
      await bare.close();
    }
  });

  test("links, applied event ids and subscription order survive a restart (embedded store)", async () => {
    const dir = tempDir();
    const env = { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, DATA_DIR: dir };
    const first = await makeApp(env);
    const a = await account(first);
    const customer = sid("cus");
    const sub = sid("sub");
    const completed = checkoutCompleted(a.id, customer, sub, { created: 1000 });
    await deliver(first, completed);
    await deliver(
      first,
      subscriptionEvent("updated", sub, customer, "canceled", { created: 1200 }),
    );
    await first.deps.close(); // keeps DATA_DIR

    const again = await makeApp(env);
    try {
      expect(await tierOf(again, a.id)).toBe("free");
      expect((await json(await deliver(again, completed))).result).toBe("duplicate");
      const old = subscriptionEvent("updated", sub, customer, "active", { created: 1100 });
      expect((await json(await deliver(again, old))).result).toBe("stale");
      expect((await again.deps.store.billing.byAccount(a.id))?.customerId).toBe(customer);
      expect(await tierOf(again, a.id)).toBe("free");
    } finally {
      await again.close();
    }
  });

  test("an event whose application fails is not recorded, so Stripe's retry applies it", async () => {
    const config = testConfig({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    const store = openEmbeddedStore(config);
    const deps = await buildDeps(config, store);
    const a = await deps.accounts.createAccountWithKey({ tier: "free" });
    const append = store.accounts.append.bind(store.accounts);
    let fail = true;
    store.accounts.append = async (events) => {
      if (fail) throw new Error("disk full");
      return append(events);
    };
    const payload = JSON.stringify(checkoutCompleted(a.accountId, sid("cus"), sid("sub")));
    const { default: Stripe } = await import("stripe");
    const header = await Stripe.webhooks.generateTestHeaderStringAsync({
      payload,
      secret: WEBHOOK_SECRET,
    });
    await expect(deps.billing.webhook(payload, header)).rejects.toThrow("disk full");
    fail = false;
    expect(await deps.billing.webhook(payload, header)).toBe("applied");
    expect((await deps.accounts.getAccount(a.accountId))?.tier).toBe("pro");
    await deps.close();
  });
});
