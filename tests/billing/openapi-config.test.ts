import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { makeApp, type TestApp } from "../support/app";

// each test builds an app or starts a server: allow for a loaded machine
setDefaultTimeout(30_000);

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

describe("OpenAPI: billing and visitor counter routes", () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await makeApp(); // documented even when billing and the counter are not configured
    doc = (await (await t.req("/swagger/json")).json()) as Json;
  });
  afterAll(() => t.close());

  test("checkout and portal take X-API-Key or Bearer", () => {
    for (const path of ["/v1/billing/checkout", "/v1/billing/portal"]) {
      const op = doc.paths[path]?.post;
      expect(op).toBeDefined();
      expect(op.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
      expect(Object.keys(op.responses)).toEqual(
        expect.arrayContaining(["200", "401", "409", "503"]),
      );
    }
    expect(doc.paths["/v1/billing/checkout"].post.requestBody).toBeDefined();
  });

  test("the webhook and the visitor counter are public", () => {
    expect(doc.paths["/v1/billing/webhook"]?.post?.security).toEqual([]);
    const hook = doc.paths["/v1/billing/webhook"].post;
    expect(hook.responses["400"]).toBeDefined();
    expect(hook.parameters).toContainEqual(
      expect.objectContaining({ name: "Stripe-Signature", in: "header", required: true }),
    );
    expect(hook.requestBody.content["application/json"]).toBeDefined();
    const vc = doc.paths["/v1/public/visitor-counter"];
    for (const m of ["get", "post"]) expect(vc?.[m]?.security).toEqual([]);
    expect(vc.get.responses["429"]).toBeDefined();
  });
});

describe("config: billing and visitor counter", () => {
  test("defaults: billing off, counter off with any origin, PUBLIC_URL from PORT", () => {
    const c = loadConfig({ PORT: "8080" });
    expect(c.STRIPE_SECRET_KEY).toBeUndefined();
    expect(c.VISITOR_COUNTER_ENABLED).toBe(false);
    expect(c.VISITOR_COUNTER_ORIGINS).toBe("*");
    expect(c.PUBLIC_URL).toBe("http://localhost:8080");
  });

  test("values are read and checked", () => {
    const c = loadConfig({
      STRIPE_SECRET_KEY: "sk_test_1",
      STRIPE_PRICE_PRO: "price_1",
      STRIPE_API_BASE: "http://127.0.0.1:12111",
      PUBLIC_URL: "https://api.example.com/",
      VISITOR_COUNTER_ENABLED: "true",
    });
    expect(c.PUBLIC_URL).toBe("https://api.example.com");
    expect(c.VISITOR_COUNTER_ENABLED).toBe(true);
    expect(() => loadConfig({ STRIPE_SECRET_KEY: "sk_test_1" })).toThrow(
      new ConfigError("STRIPE_PRICE_PRO: required when STRIPE_SECRET_KEY is set"),
    );
    for (const [k, v] of <[string, string][]>[
      ["STRIPE_API_BASE", "ftp://x"],
      ["STRIPE_API_BASE", "http://host/path"],
      ["PUBLIC_URL", "example.com"],
      ["VISITOR_COUNTER_ENABLED", "perhaps"],
    ])
      expect(() => loadConfig({ [k]: v })).toThrow(`${k}:`);
  });
});
