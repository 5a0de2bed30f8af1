/**
 * GET /v1/brand?transaction= and POST /v1/transactions through the real app (embedded store in
 * a temp dir, the real catalog): answers, 404 merchant_not_found, validation, the buckets they
 * count against, caching and the analytics misses they record.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount, makeApp, type TestApp } from "../../support/app";
import { expectError } from "../../support/errors";
import { settle } from "../../usage/util";

let t: TestApp;
let key: string;

interface Info {
  merchant: string | null;
  intermediary: { name: string; kind: string; slug: string | null } | null;
  country: string | null;
  match: string | null;
  confidence: number;
  operation: string | null;
}
interface Answer {
  error?: string;
  message?: string;
  slug?: string;
  transaction?: Info;
  [k: string]: unknown;
}
interface Batch {
  results: { descriptor: string; brand: { slug: string } | null; transaction: Info }[];
}

const lookup = async (descriptor: string, extra = "", k = key) => {
  const r = await t.get(
    `/v1/brand?transaction=${encodeURIComponent(descriptor)}${extra ? `&${extra}` : ""}`,
    k,
  );
  return { status: r.status, headers: r.headers, body: (await r.json()) as Answer };
};
const batch = async (items: unknown[], k = key) =>
  t.post("/v1/transactions", k, { transactions: items });
const usage = async (k: string) =>
  (
    (await (await t.get("/v1/usage", k)).json()) as {
      endpoints: Record<string, { used: number }>;
    }
  ).endpoints;

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(async () => {
  await t.deps.enrichment.idle();
  await t.close();
});

describe("GET /v1/brand?transaction=", () => {
  test("a chain's descriptor: the BrandResponse with the transaction object, cached like a domain lookup", async () => {
    const r = await lookup("STARBUCKS 1523 OMAHA NE");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=300");
    expect(r.body.slug).toBe("starbucks");
    expect(r.body.transaction).toEqual({
      merchant: "STARBUCKS",
      intermediary: null,
      country: "us",
      match: "name",
      confidence: 1,
      operation: null,
    });
    // the same fields as a domain lookup of the same brand, plus `transaction`
    const byDomain = (await (await t.get("/v1/brand?domain=starbucks.com", key)).json()) as Answer;
    const { transaction: _, ...brand } = r.body;
    expect(brand).toEqual(byDomain);
  });
  test("an intermediary is reported and the merchant after it answered", async () => {
    const r = await lookup("DOORDASH*CHIPOTLE", "country=US&mcc=5814");
    expect(r.status).toBe(200);
    expect(r.body.slug).toBe("chipotle");
    expect(r.body.transaction?.intermediary).toEqual({
      name: "DoorDash",
      kind: "delivery",
      slug: "doordash",
    });
  });
  test("a descriptor naming only the intermediary answers the intermediary", async () => {
    const r = await lookup("AMZN MKTP US*2K8J90TQ2");
    expect(r.status).toBe(200);
    expect(r.body.slug).toBe("amazon");
    expect(r.body.transaction?.match).toBe("intermediary");
    expect(r.body.transaction?.intermediary?.name).toBe("Amazon Marketplace");
    expect(r.body.transaction?.country).toBe("us");
  });
  test("country and MCC tell namesakes apart", async () => {
    const us = await lookup("TARGET 00012345", "country=US");
    const au = await lookup("TARGET 00012345", "country=au");
    expect(us.body.slug).toBe(t.deps.brands.resolveHost("target.com")?.slug);
    expect(au.body.slug).toBe(t.deps.brands.resolveHost("target.com.au")?.slug);
    expect(us.body.slug).not.toBe(au.body.slug);
    const fuel = await lookup("VALERO 1234", "mcc=5542");
    const bakery = await lookup("VALERO 1234", "mcc=5462");
    expect(fuel.body.slug).toBe(t.deps.brands.resolveHost("valero.com")?.slug);
    expect(bakery.body.slug).not.toBe(fuel.body.slug);
  });
  test("a local business, a person and a bank operation: 404 merchant_not_found with what was read", async () => {
    const local = await lookup("SQ *LUCYS LEMONADE STAND");
    expect(local.status).toBe(404);
    expect(local.body.error).toBe("merchant_not_found");
    expect(local.body.transaction).toMatchObject({
      merchant: "LUCYS LEMONADE STAND",
      intermediary: { name: "Square", kind: "processor" },
      match: null,
    });
    expect(local.headers.get("cache-control")).toBeNull();
    const person = await lookup("PAYPAL *MARIAGARCIA77");
    expect(person.status).toBe(404);
    expect(person.body.transaction?.intermediary?.name).toBe("PayPal");
    const cash = await lookup("CASH WITHDRAWAL 0042");
    expect(cash.status).toBe(404);
    expect(cash.body.transaction?.operation).toBe("cash_withdrawal");
    expect(cash.body.message).toContain("bank operation");
  });
  test("exactly one of domain, email and transaction; country and mcc with transaction only", async () => {
    for (const [query, mentions] of [
      ["", "transaction"],
      ["domain=starbucks.com&transaction=STARBUCKS%201523", "not two"],
      ["email=a@starbucks.com&transaction=STARBUCKS%201523", "not two"],
      ["domain=starbucks.com&country=US", "country"],
      ["domain=starbucks.com&mcc=5814", "mcc"],
      ["transaction=STARBUCKS%201523&wait=100", "wait"],
    ] as const)
      await expectError(await t.get(`/v1/brand?${query}`, key), 422, "validation_error", mentions);
  });
  test("bounds: a descriptor of 3 to 200 characters, an alpha-2 country, a 4-digit MCC", async () => {
    await expectError(
      await t.get("/v1/brand?transaction=ab", key),
      422,
      "validation_error",
      "transaction",
    );
    expect((await lookup("abc")).status).toBe(404);
    expect((await lookup(`STARBUCKS ${"X".repeat(190)}`)).status).toBe(404);
    await expectError(
      await t.get(`/v1/brand?transaction=${"X".repeat(201)}`, key),
      422,
      "validation_error",
      "transaction",
    );
    for (const [q, field] of [
      ["country=USA", "country"],
      ["country=1", "country"],
      ["mcc=54", "mcc"],
      ["mcc=abcd", "mcc"],
    ]) {
      const r = await t.get(`/v1/brand?transaction=STARBUCKS%201523&${q}`, key);
      await expectError(r, 422, "validation_error", field);
    }
  });
  test("odd descriptors answer 200 or 404 merchant_not_found, never an error", async () => {
    const odd = [
      "***",
      "   *   ",
      "1234567890",
      "#".repeat(200),
      "9".repeat(200),
      "A ".repeat(100).trim(),
      "Ünïcödé Çafé Münch",
      "麦当劳 1234",
      "SQ *",
      "PAYPAL *",
      "AMZN MKTP",
      "..... .com",
      "http://[::1]/x",
      "\u0000\u0001 STARBUCKS",
      "STARBUCKS\tOMAHA\nNE",
      "x.y.z.a.b.c.d.e.f.g.h",
    ];
    const r = await batch(odd.map((descriptor) => ({ descriptor })));
    expect(r.status).toBe(200);
    const body = (await r.json()) as Batch;
    expect(body.results).toHaveLength(odd.length);
    for (const d of odd) {
      const one = await lookup(d);
      expect({ d, status: one.status }).toEqual({ d, status: one.status === 200 ? 200 : 404 });
      if (one.status === 404) expect(one.body.error).toBe("merchant_not_found");
    }
  });
  test("no key: 401; counts against the domain bucket", async () => {
    await expectError(await t.req("/v1/brand?transaction=STARBUCKS"), 401, "invalid_api_key");
    const free = await t.key("free");
    const r = await lookup("STARBUCKS 1523 OMAHA NE", "", free);
    expect(r.headers.get("x-ratelimit-limit")).toBe("20");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("19");
    await lookup("SQ *LUCYS LEMONADE STAND", "", free);
    const used = await usage(free);
    expect(used.domain?.used).toBe(2);
    expect(used.batch?.used ?? 0).toBe(0);
  });
});

describe("POST /v1/transactions", () => {
  const items = [
    { descriptor: "STARBUCKS 1523 OMAHA NE" },
    { descriptor: "SQ *LUCYS LEMONADE STAND", country: "US", mcc: "5499" },
    { descriptor: "TARGET 00012345", country: "AU" },
    { descriptor: "CASH WITHDRAWAL 0042" },
    { descriptor: "AMZN MKTP US*2K8J90TQ2" },
  ];
  test("results in order, each exactly as the single lookup answers", async () => {
    const r = await batch(items);
    expect(r.status).toBe(200);
    const body = (await r.json()) as Batch;
    expect(body.results.map((x) => x.descriptor)).toEqual(items.map((i) => i.descriptor));
    for (const [i, item] of items.entries()) {
      const qs = [item.country ? `country=${item.country}` : "", item.mcc ? `mcc=${item.mcc}` : ""]
        .filter(Boolean)
        .join("&");
      const single = await lookup(item.descriptor, qs);
      const { transaction, ...brand } = single.body;
      const got = body.results[i];
      expect(got?.transaction).toEqual(transaction as Info);
      expect(got?.brand).toEqual(single.status === 200 ? (brand as { slug: string }) : null);
    }
    expect(body.results.filter((x) => x.brand).map((x) => x.brand?.slug)).toHaveLength(3);
  });
  test("one call counts once against the batch bucket, whatever it holds", async () => {
    const k = await t.key("pro");
    const r = await batch(items, k);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("50");
    const used = await usage(k);
    expect(used.batch?.used).toBe(1);
    expect(used.domain?.used ?? 0).toBe(0);
  });
  test("up to 100 descriptors on paid keys, 10 on free keys: more is 422 batch_too_large", async () => {
    const many = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ descriptor: `STARBUCKS ${1000 + i}` }));
    const full = await batch(many(100));
    expect(full.status).toBe(200);
    expect(((await full.json()) as Batch).results).toHaveLength(100);
    await expectError(await batch(many(101)), 422, "batch_too_large", "100");
    const free = await t.key("free");
    expect((await batch(many(10), free)).status).toBe(200);
    await expectError(await batch(many(11), free), 422, "batch_too_large", "10");
    const internal = await t.key("internal");
    expect((await batch(many(100), internal)).status).toBe(200);
  });
  test("validation errors name the field", async () => {
    await expectError(await batch([]), 422, "validation_error", "transactions");
    await expectError(
      await t.post("/v1/transactions", key, { descriptors: ["STARBUCKS"] }),
      422,
      "validation_error",
      "transactions",
    );
    await expectError(await batch([{ descriptor: "ab" }]), 422, "validation_error", "descriptor");
    await expectError(
      await batch([{ descriptor: "STARBUCKS", country: "USA" }]),
      422,
      "validation_error",
      "country",
    );
    await expectError(
      await batch([{ descriptor: "STARBUCKS", mcc: "5" }]),
      422,
      "validation_error",
      "mcc",
    );
    await expectError(await t.req("/v1/transactions", { method: "POST" }), 401, "invalid_api_key");
  });
});

describe("analytics misses", () => {
  test("a descriptor no brand matched is recorded as transaction:<merchant>; people and bank operations are not", async () => {
    const a = await createAccount(t, "pro");
    const before = (t.deps.usage as unknown as { stats(): { recorded: number } }).stats().recorded;
    await lookup("SQ *LUCYS LEMONADE STAND", "", a.apiKey);
    await lookup("PAYPAL *MARIAGARCIA77", "", a.apiKey);
    await lookup("CASH WITHDRAWAL 0042", "", a.apiKey);
    await batch(
      [{ descriptor: "TST* EL FARO GRILL 12" }, { descriptor: "STARBUCKS 1523" }],
      a.apiKey,
    );
    await settle(t.deps.usage, before + 4);
    const r = await t.get("/v1/analytics/misses?kind=transaction", a.apiKey);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { misses: { kind: string; value: string; count: number }[] };
    expect(body.misses).toEqual([
      { kind: "transaction", value: "el faro grill", count: 1 },
      { kind: "transaction", value: "lucys lemonade stand", count: 1 },
    ]);
  });
});

describe("OpenAPI", () => {
  test("both routes document their parameters, examples and every status", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            description?: string;
            parameters?: { name: string }[];
            responses?: Record<string, unknown>;
            requestBody?: unknown;
          }
        >
      >;
    };
    const get = doc.paths["/v1/brand"]?.get;
    expect(get?.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(["domain", "email", "transaction", "country", "mcc"]),
    );
    expect(get?.description).toContain("merchant_not_found");
    const post = doc.paths["/v1/transactions"]?.post;
    expect(Object.keys(post?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "413", "422", "429"]),
    );
    expect(JSON.stringify(post?.requestBody)).toContain("SQ *BLUE BOTTLE COFFEE OAKLAND");
    expect(JSON.stringify(post?.responses)).toContain("LUCYS LEMONADE STAND");
  });
});
