import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { freePort, makeApp, type TestApp, useAccountIdBearer } from "../support/app";
import { expectError } from "../support/errors";
import { describeIf, NO_STRIPE_MOCK } from "../support/skip";
import { stripeMock } from "../support/stripe-mock";
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

const json = async (r: Response) => (await r.json()) as Record<string, unknown>;

/** Stripe-mock, Stripe's own API test server (validates requests against Stripe's OpenAPI). */
const mock = await stripeMock();
if (!mock)
  console.warn(
    "skipping checkout/portal tests: stripe-mock is not installed (bash .ci/stripe-mock.sh)",
  );

/**
 * A loopback proxy in front of stripe-mock that keeps what the SDK sends: stripe-mock answers
 * canned fixtures and stores nothing, so the request is where "customer reused" can be seen.
 */
interface Sent {
  method: string;
  path: string;
  form: URLSearchParams;
}

const withStripeMock = describeIf(!!mock, NO_STRIPE_MOCK);

withStripeMock("checkout and portal through the stripe SDK against stripe-mock", () => {
  let t: TestApp;
  let proxy: ReturnType<typeof Bun.serve>;
  const sent: Sent[] = [];
  const lastSent = (path: string) => sent.filter((s) => s.path === path).at(-1);

  beforeAll(async () => {
    const upstream = (mock as { url: string }).url;
    proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        const body = await req.text();
        sent.push({ method: req.method, path: url.pathname, form: new URLSearchParams(body) });
        const headers = new Headers(req.headers);
        headers.delete("host");
        return fetch(`${upstream}${url.pathname}${url.search}`, {
          method: req.method,
          headers,
          body: body || undefined,
        });
      },
    });
    t = await makeApp(
      {
        STRIPE_SECRET_KEY: "sk_test_123",
        STRIPE_PRICE_PRO: "price_pro_test",
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_API_BASE: `http://127.0.0.1:${proxy.port}`,
        PUBLIC_URL: "https://brand.example/",
      },
      { customize: useAccountIdBearer },
    );
  });
  afterAll(async () => {
    await t?.close();
    proxy?.stop(true);
  });

  const checkout = (headers: Record<string, string>, body: unknown = { plan: "pro" }) =>
    t.req("/v1/billing/checkout", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const portal = (headers: Record<string, string>) =>
    t.req("/v1/billing/portal", { method: "POST", headers });

  test("checkout answers a Checkout Session url and id; Stripe got a subscription session for the account", async () => {
    const a = await account(t);
    const r = await checkout({ "x-api-key": a.key });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const body = (await r.json()) as { url: string; sessionId: string };
    expect(Object.keys(body).sort()).toEqual(["sessionId", "url"]);
    expect(body.url).toStartWith("https://");
    expect(body.sessionId).toStartWith("cs_");
    const s = lastSent("/v1/checkout/sessions");
    expect(s?.method).toBe("POST");
    expect(s?.form.get("mode")).toBe("subscription");
    expect(s?.form.get("client_reference_id")).toBe(a.id);
    expect(s?.form.get("line_items[0][price]")).toBe("price_pro_test");
    expect(s?.form.get("line_items[0][quantity]")).toBe("1");
    expect(s?.form.get("subscription_data[metadata][accountId]")).toBe(a.id);
    expect(s?.form.get("success_url")).toStartWith("https://brand.example/?checkout=success");
    expect(s?.form.get("cancel_url")).toBe("https://brand.example/?checkout=cancelled");
    // a first checkout has no customer yet: Stripe makes one from the account's e-mail
    expect(s?.form.get("customer")).toBeNull();
    expect(s?.form.get("customer_email")).toBe("buyer@example.com");
  });

  test("checkout and portal accept a bearer token too", async () => {
    const a = await account(t);
    const r = await checkout({ authorization: `Bearer acct:${a.id}` });
    expect(r.status).toBe(200);
    expect(lastSent("/v1/checkout/sessions")?.form.get("client_reference_id")).toBe(a.id);
    const p = await portal({ authorization: `Bearer acct:${a.id}` });
    expect(p.status).toBe(409); // authenticated, no customer yet
  });

  test("without credentials: 401 invalid_api_key, before the body is looked at", async () => {
    for (const r of [
      await checkout({}),
      await checkout({ "x-api-key": "bak_0000000000000000_nope" }),
      await checkout({ authorization: "Bearer nonsense" }, "{not json"),
      await portal({}),
    ]) {
      expect(r.status).toBe(401);
      expect((await json(r)).error).toBe("invalid_api_key");
    }
  });

  test("a plan other than pro, or no body, is 422 validation_error", async () => {
    const a = await account(t);
    for (const body of [{ plan: "enterprise" }, {}, "{bad json"]) {
      const r = await t.req("/v1/billing/checkout", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": a.key },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      expect(r.status).toBe(422);
      expect((await json(r)).error).toBe("validation_error");
    }
  });

  test("a pro account is 409 already_subscribed; enterprise and internal are 409 managed_plan", async () => {
    const before = sent.length;
    const pro = await account(t, "pro");
    const r = await checkout({ "x-api-key": pro.key });
    expect(r.status).toBe(409);
    expect((await json(r)).error).toBe("already_subscribed");
    for (const tier of ["enterprise", "internal"] as const) {
      const a = await account(t, tier);
      const m = await checkout({ "x-api-key": a.key });
      expect(m.status).toBe(409);
      expect((await json(m)).error).toBe("managed_plan");
    }
    expect(sent.length).toBe(before); // Stripe was not asked
  });

  test("portal without a Stripe customer is 409 no_billing_account", async () => {
    const a = await account(t);
    const r = await portal({ "x-api-key": a.key });
    expect(r.status).toBe(409);
    expect((await json(r)).error).toBe("no_billing_account");
  });

  test("after checkout's webhook: portal opens for the linked customer, and a later checkout reuses it", async () => {
    const a = await account(t);
    expect((await checkout({ "x-api-key": a.key })).status).toBe(200);
    const customer = sid("cus");
    const sub = sid("sub");
    await deliver(t, checkoutCompleted(a.id, customer, sub, { created: 1000 }));
    expect(await tierOf(t, a.id)).toBe("pro");

    const p = await portal({ "x-api-key": a.key });
    expect(p.status).toBe(200);
    const pb = (await p.json()) as { url: string };
    expect(Object.keys(pb)).toEqual(["url"]);
    expect(pb.url).toStartWith("https://");
    const ps = lastSent("/v1/billing_portal/sessions");
    expect(ps?.form.get("customer")).toBe(customer);
    expect(ps?.form.get("return_url")).toBe("https://brand.example/");

    // pro now: a second checkout is refused; after cancelling, it reuses the customer
    await expectError(await checkout({ "x-api-key": a.key }), 409, "already_subscribed");
    await deliver(t, subscriptionEvent("deleted", sub, customer, "canceled", { created: 2000 }));
    expect(await tierOf(t, a.id)).toBe("free");
    expect((await checkout({ "x-api-key": a.key })).status).toBe(200);
    const again = lastSent("/v1/checkout/sessions");
    expect(again?.form.get("customer")).toBe(customer);
    expect(again?.form.get("customer_email")).toBeNull();
  });
});

withStripeMock("webhook events built from Stripe's own objects (stripe-mock fixtures)", () => {
  test("a real subscription object in customer.subscription.updated/deleted moves the linked account", async () => {
    const { default: Stripe } = await import("stripe");
    const u = new URL((mock as { url: string }).url);
    const stripe = new Stripe("sk_test_123", {
      host: u.hostname,
      port: u.port,
      protocol: "http",
    });
    const sub = (await stripe.subscriptions.retrieve("sub_fixture")) as unknown as Record<
      string,
      unknown
    >;
    const customer = typeof sub.customer === "string" ? sub.customer : "";
    expect(customer).toStartWith("cus_");
    const t = await makeApp({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
    try {
      const a = await account(t);
      await deliver(t, checkoutCompleted(a.id, customer, sub.id as string, { created: 1000 }));
      const event = (type: string, status: string, created: number) => ({
        id: sid("evt"),
        object: "event",
        type,
        created,
        data: { object: { ...sub, status } },
      });
      await deliver(t, event("customer.subscription.updated", "canceled", 1100));
      expect(await tierOf(t, a.id)).toBe("free");
      await deliver(t, event("customer.subscription.updated", "active", 1200));
      expect(await tierOf(t, a.id)).toBe("pro");
      await deliver(t, event("customer.subscription.deleted", "canceled", 1300));
      expect(await tierOf(t, a.id)).toBe("free");
    } finally {
      await t.close();
    }
  });
});

describe("billing not configured or unreachable", () => {
  test("without STRIPE_SECRET_KEY checkout and portal are 503 billing_not_configured (after credentials)", async () => {
    const t = await makeApp();
    try {
      const a = await account(t);
      const c = await t.post("/v1/billing/checkout", a.key, { plan: "pro" });
      expect(c.status).toBe(503);
      expect((await json(c)).error).toBe("billing_not_configured");
      const p = await t.req("/v1/billing/portal", {
        method: "POST",
        headers: { "x-api-key": a.key },
      });
      expect(p.status).toBe(503);
      expect((await json(p)).error).toBe("billing_not_configured");
      const anon = await t.req("/v1/billing/portal", { method: "POST" });
      expect(anon.status).toBe(401);
    } finally {
      await t.close();
    }
  });

  test("a Stripe that does not answer is 502 billing_provider_error with no internals", async () => {
    const port = await freePort(); // nothing listens there
    const t = await makeApp({
      STRIPE_SECRET_KEY: "sk_test_123",
      STRIPE_PRICE_PRO: "price_pro_test",
      STRIPE_API_BASE: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "error",
    });
    const log = captureLogs();
    try {
      const a = await account(t);
      const r = await t.post("/v1/billing/checkout", a.key, { plan: "pro" });
      expect(r.status).toBe(502);
      const body = await json(r);
      expect(body.error).toBe("billing_provider_error");
      expect(String(body.message)).not.toMatch(/127\.0\.0\.1|ECONN|stripe\.com|stack/i);
      // the cause is logged for the operator (and only there)
      expect(log.lines).toContainEqual(
        expect.objectContaining({ level: "error", msg: "billing checkout failed" }),
      );
    } finally {
      log.restore();
      await t.close();
    }
  });
});
