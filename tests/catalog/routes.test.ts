import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ServiceResponse } from "../../src/catalog/model";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

let t: TestApp;
let free: string;
let pro: string;
beforeAll(async () => {
  t = await makeApp();
  free = await t.key("free");
  pro = await t.key("pro");
});
afterAll(() => t.close());

const SERVICE_KEYS = [
  "id",
  "slug",
  "name",
  "brandColor",
  "darkModeColor",
  "svgVariants",
  "colors",
  "provenance",
  "_css",
  "_notice",
].sort();

/** optional fields of the brand directory and artwork provenance, present only where known */
const DIRECTORY_KEYS = new Set(["description", "wikidata", "links", "artwork"]);

function expectServiceResponse(item: Record<string, unknown>) {
  expect(
    Object.keys(item)
      .filter((k) => !DIRECTORY_KEYS.has(k))
      .sort(),
  ).toEqual(SERVICE_KEYS);
  expect(Number.isInteger(item.id)).toBe(true);
  expect(item.slug).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
  expect(item.svgVariants).toBeNull();
  for (const p of Object.values(item.provenance as Record<string, string>))
    expect(p).toBe("catalog");
  expect(typeof item._notice).toBe("string");
  if (item.brandColor !== null) {
    expect(item.brandColor).toMatch(/^[0-9a-f]{6}$/);
    expect(item.darkModeColor).toMatch(/^[0-9a-f]{6}$/);
    const css = item._css as Record<string, string>;
    expect(Object.keys(css).sort()).toEqual(
      ["--brand-color", "--brand-color-contrast", "--brand-color-dark"].sort(),
    );
    expect(css["--brand-color"]).toBe(`#${item.brandColor}`);
    expect(css["--brand-color-dark"]).toBe(`#${item.darkModeColor}`);
    expect(css["--brand-color-contrast"]).toMatch(/^#(000000|ffffff)$/);
  }
}

describe("GET /v1/catalog", () => {
  test("first page with defaults", async () => {
    const res = await t.get("/v1/catalog", free);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.limit).toBe(50);
    expect(body.offset).toBe(0);
    expect(body.items).toHaveLength(50);
    expect(body.total).toBe(t.deps.catalog.size);
    for (const item of body.items) expectServiceResponse(item);
    const ids = body.items.map((i: { id: number }) => i.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  test("pages are contiguous and the last page is short", async () => {
    const total = t.deps.catalog.size;
    const a = await (await t.get("/v1/catalog?limit=3&offset=0", free)).json();
    const b = await (await t.get("/v1/catalog?limit=3&offset=3", free)).json();
    expect(b.items[0].id).toBeGreaterThan(a.items[2].id);
    const last = await (await t.get(`/v1/catalog?limit=200&offset=${total - 2}`, free)).json();
    expect(last.items).toHaveLength(2);
    const past = await (await t.get(`/v1/catalog?limit=200&offset=${total + 10}`, free)).json();
    expect(past.items).toEqual([]);
    expect(past.total).toBe(total);
  });

  test("unknown query parameters (cache-busters) are ignored", async () => {
    const res = await t.get("/v1/catalog?limit=2&v=123", free);
    expect(res.status).toBe(200);
    expect((await res.json()).items).toHaveLength(2);
  });

  test("limit bounds 1 and 200 are accepted", async () => {
    expect((await (await t.get("/v1/catalog?limit=1", free)).json()).items).toHaveLength(1);
    expect((await (await t.get("/v1/catalog?limit=200", free)).json()).items).toHaveLength(200);
  });

  test.each([
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=abc", "limit"],
    ["limit=1.5", "limit"],
    ["limit=", "limit"],
    ["offset=-1", "offset"],
    ["offset=x", "offset"],
    ["offset=1000000001", "offset"],
    ["offset=9007199254740993", "offset"],
  ])("%s is 422 validation_error naming the field", async (qs, field) => {
    const res = await t.get(`/v1/catalog?${qs}`, free);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.error).toBe("validation_error");
    expect(body.message).toContain(field);
  });

  test("no SVG markup appears anywhere in catalog JSON", async () => {
    const text = await (await t.get("/v1/catalog?limit=200", free)).text();
    expect(text).not.toContain("<svg");
    expect(text).not.toContain("<path");
  });
});

describe("GET /v1/catalog/{slug}", () => {
  test("every entry of the catalog matches the ServiceResponse schema", () => {
    const all = t.deps.catalog.all();
    expect(all.length).toBeGreaterThan(0);
    for (const brand of all) {
      const view = JSON.parse(t.deps.catalog.viewJson(brand.slug) as string);
      if (!Value.Check(ServiceResponse, view))
        throw new Error(`${brand.slug}: ${[...Value.Errors(ServiceResponse, view)][0]?.message}`);
      expectServiceResponse(view);
    }
  });

  test("returns the entry", async () => {
    const res = await t.get("/v1/catalog/github", free);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("<svg");
    const body = JSON.parse(text);
    expectServiceResponse(body);
    expect(body.slug).toBe("github");
    expect(body.name).toBe("GitHub");
  });

  test("slugs are case-insensitive", async () => {
    expect((await (await t.get("/v1/catalog/GitHub", free)).json()).slug).toBe("github");
  });

  test("unknown slug is 404 service_not_found", async () => {
    const res = await t.get("/v1/catalog/no-such-brand-xyz", free);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: "service_not_found",
      message: expect.stringContaining("no-such-brand-xyz"),
    });
  });

  test.each([
    ["/v1/catalog/", "a".repeat(201)],
    ["/v1/catalog/", "%E0%A4%A"],
    ["/v1/svg/", "a".repeat(300)],
    ["/v1/png/", "%ZZ"],
    ["/v1/webp/", "%E0%A4%A"],
  ])("%s with an over-long or undecodable slug is 404 service_not_found", async (route, slug) => {
    const key = await t.key("pro");
    const res = await t.get(`${route}${slug}`, key);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: "service_not_found",
      message: "No catalog entry with that slug.",
    });
    // credentials still come first
    await expectError(await t.req(`${route}${slug}`), 401, "invalid_api_key");
  });
});

describe("POST /v1/catalog/batch", () => {
  test("resolves found and missing slugs, duplicates once", async () => {
    const res = await t.post("/v1/catalog/batch", free, {
      slugs: ["github", "nope-nope", "github", "GitHub", "stripe"],
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body.results).sort()).toEqual(["github", "nope-nope", "stripe"]);
    expect(body.results["nope-nope"]).toBeNull();
    expectServiceResponse(body.results.github);
    expect(body.found).toBe(2);
    expect(body.notFound).toEqual(["nope-nope"]);
    expect(JSON.stringify(body)).not.toContain("<svg");
  });

  test("an empty list is fine", async () => {
    const body = await (await t.post("/v1/catalog/batch", free, { slugs: [] })).json();
    expect(body).toEqual({ results: {}, found: 0, notFound: [] });
  });

  const first: string[] = [];
  /** the first n slugs of the catalog (the first 60 read once) */
  const slugs = (n: number) => {
    if (first.length === 0)
      for (const b of t.deps.catalog.each()) if (first.push(b.slug) >= 60) break;
    return first.slice(0, n);
  };

  test("free tier: 10 unique slugs pass, 11 are 422 batch_too_large naming the cap", async () => {
    expect((await t.post("/v1/catalog/batch", free, { slugs: slugs(10) })).status).toBe(200);
    // duplicates do not count against the cap
    const dup = [...slugs(10), ...slugs(10)];
    expect((await t.post("/v1/catalog/batch", free, { slugs: dup })).status).toBe(200);
    const res = await t.post("/v1/catalog/batch", free, { slugs: slugs(11) });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.error).toBe("batch_too_large");
    expect(body.message).toContain("10");
  });

  test("paid tiers: 50 unique slugs pass, 51 do not", async () => {
    for (const tier of ["pro", "enterprise", "internal"] as const) {
      const key = tier === "pro" ? pro : await t.key(tier);
      const ok = await t.post("/v1/catalog/batch", key, { slugs: slugs(50) });
      expect(ok.status).toBe(200);
      expect((await ok.json()).found).toBe(50);
      const res = await t.post("/v1/catalog/batch", key, { slugs: slugs(51) });
      expect(res.status).toBe(422);
      expect((await res.json()).message).toContain("50");
    }
  });

  test.each([
    ["missing slugs", { slug: ["github"] }, "slugs"],
    ["slugs not an array", { slugs: "github" }, "slugs"],
    ["a non-string slug", { slugs: ["github", 42] }, "slugs"],
    ["a JSON array body", ["github"], ""],
  ])("%s is 422 validation_error naming the field", async (_n, body, field) => {
    const res = await t.post("/v1/catalog/batch", free, body);
    expect(res.status).toBe(422);
    const json = await res.json();
    expect(json.error).toBe("validation_error");
    expect(json.message).toContain(field);
  });

  test("malformed JSON is 422 validation_error", async () => {
    const res = await t.post("/v1/catalog/batch", free, '{"slugs": [');
    expect(res.status).toBe(422);
    expect((await res.json()).error).toBe("validation_error");
  });

  test("slugs named like Object.prototype members are keys like any other", async () => {
    const res = await t.post("/v1/catalog/batch", await t.key("pro"), {
      slugs: ["__proto__", "constructor", "github"],
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(await res.text());
    expect(Object.keys(body.results).sort()).toEqual(["__proto__", "constructor", "github"]);
    expect(body.results.github.slug).toBe("github");
    expect(body.notFound).toEqual(["__proto__", "constructor"]);
  });

  test("a declared body over 64 KiB is 413 payload_too_large, before it is read", async () => {
    const body = JSON.stringify({ slugs: Array.from({ length: 6000 }, () => "github-brand") });
    const res = await t.req("/v1/catalog/batch", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(body.length),
        "x-api-key": free,
      },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: "payload_too_large",
      message: "Request body over 65536 bytes; this route takes a small JSON object.",
    });
  });
});

describe("authentication", () => {
  test.each([
    ["GET", "/v1/catalog"],
    ["GET", "/v1/catalog/github"],
    ["POST", "/v1/catalog/batch"],
  ])("%s %s without a key is 401 invalid_api_key", async (method, path) => {
    const init: RequestInit = { method };
    if (method === "POST") {
      init.body = JSON.stringify({ slugs: ["github"] });
      init.headers = { "content-type": "application/json" };
    }
    const res = await t.req(path, init);
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.error).toBe("invalid_api_key");
    expect(body.message).toContain("X-API-Key");
  });

  test.each([
    ["no key", {}],
    ["an unknown key", { "x-api-key": "bak_0000000000000000_nope" }],
  ])("malformed JSON with %s is 401, not 422", async (_, headers) => {
    for (const body of ['{"slugs": [', ""]) {
      const res = await t.req("/v1/catalog/batch", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("invalid_api_key");
    }
  });

  test("an unknown or revoked key is 401", async () => {
    const forged = `${free.slice(0, 21)}${"x".repeat(32)}`;
    await expectError(await t.get("/v1/catalog", forged), 401, "invalid_api_key");
    await expectError(await t.get("/v1/catalog", "garbage"), 401, "invalid_api_key");
    const issued = await t.deps.accounts.createAccountWithKey({ tier: "free" });
    await t.deps.accounts.regenerateKey(issued.accountId);
    await expectError(await t.get("/v1/catalog", issued.apiKey), 401, "invalid_api_key");
  });
});

describe("retired slugs (fixtures/slug-redirects.json)", () => {
  test("a merged-away slug answers with the brand it became, by slug, in a batch and as SVG", async () => {
    const res = await t.get("/v1/catalog/skoda-auto", free);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { slug: string }).slug).toBe("skoda");
    const batch = await t.post("/v1/catalog/batch", pro, { slugs: ["skoda-auto"] });
    const body = (await batch.json()) as { results: Record<string, { slug: string } | null> };
    expect(body.results["skoda-auto"]?.slug).toBe("skoda");
    expect((await t.get("/v1/svg/skoda-auto", free)).status).toBe(200);
  });
});
