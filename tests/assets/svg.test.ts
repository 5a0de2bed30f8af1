import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PLACEHOLDER_SVG } from "../../src/assets/service";
import type { Brand } from "../../src/catalog/built-catalog";
import { makeApp, type TestApp } from "../support/app";
import { findBrand, has, lacks, sha256 } from "./util";

let t: TestApp;
let free: string;
let pro: string;
let mono: Brand; // has mono and color
let monoOnly: Brand; // has mono, no wordmark
let noMono: Brand; // has color, no mono
beforeAll(async () => {
  t = await makeApp();
  free = await t.key("free");
  pro = await t.key("pro");
  mono = findBrand(t, (b) => has(b, "mono", "color"), "mono and color");
  monoOnly = findBrand(t, (b) => has(b, "mono") && lacks(b, "wordmark"), "mono, no wordmark");
  noMono = findBrand(t, (b) => has(b, "color") && lacks(b, "mono"), "color but no mono");
});
afterAll(() => t.close());

const CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

async function svg(path: string, key: string, headers: Record<string, string> = {}) {
  const res = await t.get(path, key, headers);
  return { res, body: await res.text() };
}

function expectArtworkHeaders(res: Response, body: string, variant: string) {
  expect(res.headers.get("content-type")).toBe("image/svg+xml");
  expect(res.headers.get("x-svg-variant")).toBe(variant);
  expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
  expect(res.headers.get("etag")).toBe(`"${sha256(body)}"`);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("content-security-policy")).toBe(CSP);
}

describe("GET /v1/svg/{slug}: resolution", () => {
  test("default variant is mono: the stored mono bytes, with all headers", async () => {
    const { res, body } = await svg(`/v1/svg/${mono.slug}`, pro);
    expect(res.status).toBe(200);
    expect(body).toBe(mono.variants.mono!.svg);
    expectArtworkHeaders(res, body, "mono");
    expect(res.headers.get("x-variant-restricted")).toBeNull();
  });

  test("a stored variant is served as stored (pro)", async () => {
    const { res, body } = await svg(`/v1/svg/${mono.slug}?variant=color`, pro);
    expect(res.status).toBe(200);
    expect(body).toBe(mono.variants.color!.svg);
    expectArtworkHeaders(res, body, "color");
  });

  test("every stored variant of a brand is reachable by name (pro)", async () => {
    const b = findBrand(t, (x) => has(x, "mono", "color", "wordmark", "icon"), "four variants");
    for (const v of ["mono", "color", "wordmark", "icon"] as const) {
      const { res, body } = await svg(`/v1/svg/${b.slug}?variant=${v}`, pro);
      expect(res.headers.get("x-svg-variant")).toBe(v);
      expect(body).toBe(b.variants[v]!.svg);
    }
  });

  test("a missing variant falls back to the stored mono", async () => {
    const { res, body } = await svg(`/v1/svg/${monoOnly.slug}?variant=wordmark`, pro);
    expect(res.status).toBe(200);
    expect(body).toBe(monoOnly.variants.mono!.svg);
    expectArtworkHeaders(res, body, "mono");
  });

  test("no mono either: paid keys get the first stored of color, icon, wordmark", async () => {
    const { res, body } = await svg(`/v1/svg/${noMono.slug}?variant=mono`, pro);
    expect(res.status).toBe(200);
    expect(body).toBe(noMono.variants.color!.svg);
    expect(res.headers.get("x-svg-variant")).toBe("color");
  });

  test("slugs are case-insensitive", async () => {
    const { res, body } = await svg(`/v1/svg/${mono.slug.toUpperCase()}`, pro);
    expect(res.status).toBe(200);
    expect(body).toBe(mono.variants.mono!.svg);
  });

  test("unknown slug: 404 service_not_found", async () => {
    const res = await t.get("/v1/svg/no-such-brand-xyz", pro);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: "service_not_found",
      message: 'No catalog entry with slug "no-such-brand-xyz".',
    });
  });

  test("unknown variant: 422 validation_error naming the parameter", async () => {
    for (const bad of ["bogus", "", "MONO"]) {
      const res = await t.get(`/v1/svg/${mono.slug}?variant=${bad}`, pro);
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body.error).toBe("validation_error");
      expect(body.message).toContain("variant");
      expect(body.message).toContain("mono, color, dark, light, wordmark, icon");
    }
  });

  test("missing or wrong API key: 401 invalid_api_key", async () => {
    const none = await t.req(`/v1/svg/${mono.slug}`);
    expect(none.status).toBe(401);
    expect((await none.json()).error).toBe("invalid_api_key");
    const wrong = await t.get(`/v1/svg/${mono.slug}?variant=bogus`, "bak_wrong");
    expect(wrong.status).toBe(401);
  });

  test("a brand with no stored SVG gets the placeholder: 200, 1 hour cache", async () => {
    const b = t.deps.catalog.brand(findBrand(t, (x) => x.id > 100, "id > 100").slug)!;
    t.deps.catalog.update({ ...b, variants: {} });
    for (const key of [pro, free]) {
      const { res, body } = await svg(`/v1/svg/${b.slug}?variant=color`, key);
      expect(res.status).toBe(200);
      expect(body).toBe(PLACEHOLDER_SVG);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
      expect(res.headers.get("x-svg-variant")).toBe("placeholder");
      expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
      expect(res.headers.get("etag")).toBe(`"${sha256(body)}"`);
      expect(res.headers.get("content-security-policy")).toBe(CSP);
    }
  });

  test("the brand is read on every request: an update (enrichment's dark/light) shows at once", async () => {
    // the build gives every brand dark and light: take them away, as for a brand that
    // reaches the catalog without them
    const built = findBrand(t, (x) => has(x, "mono"), "mono");
    const { dark: _d, light: _l, ...rest } = built.variants;
    t.deps.catalog.update({ ...built, variants: rest });
    const b = t.deps.catalog.brand(built.slug)!;
    expect(t.deps.enrichment.needs(b)).toBe(true);
    const before = await svg(`/v1/svg/${b.slug}?variant=dark`, pro);
    expect(before.res.headers.get("x-svg-variant")).toBe("mono");
    t.deps.enrichment.request(b);
    await t.deps.enrichment.idle();
    const enriched = t.deps.catalog.brand(b.slug)!;
    expect(enriched.variants.dark).toBeDefined();
    for (const v of ["dark", "light"] as const) {
      const after = await svg(`/v1/svg/${b.slug}?variant=${v}`, pro);
      expect(after.res.headers.get("x-svg-variant")).toBe(v);
      expect(after.body).toBe(enriched.variants[v]!.svg);
      expect(after.res.headers.get("etag")).toBe(`"${sha256(after.body)}"`);
    }
  });
});

describe("GET /v1/svg/{slug}: tiers", () => {
  test("free key asking for another variant gets mono and X-Variant-Restricted", async () => {
    for (const v of ["color", "dark", "light", "wordmark", "icon"]) {
      const { res, body } = await svg(`/v1/svg/${mono.slug}?variant=${v}`, free);
      expect(res.status).toBe(200);
      expect(body).toBe(mono.variants.mono!.svg);
      expectArtworkHeaders(res, body, "mono");
      expect(res.headers.get("x-variant-restricted")).toBe(v);
    }
  });

  test("free key asking for mono gets no restriction header", async () => {
    const { res } = await svg(`/v1/svg/${mono.slug}?variant=mono`, free);
    expect(res.headers.get("x-variant-restricted")).toBeNull();
  });

  test("free key on a brand without mono gets the placeholder, never the colour artwork", async () => {
    const { res, body } = await svg(`/v1/svg/${noMono.slug}?variant=color`, free);
    expect(res.status).toBe(200);
    expect(body).toBe(PLACEHOLDER_SVG);
    expect(res.headers.get("x-svg-variant")).toBe("placeholder");
    expect(res.headers.get("x-variant-restricted")).toBe("color");
  });

  test("enterprise and internal keys get every variant", async () => {
    for (const tier of ["enterprise", "internal"] as const) {
      const key = await t.key(tier);
      const { res, body } = await svg(`/v1/svg/${mono.slug}?variant=color`, key);
      expect(res.headers.get("x-svg-variant")).toBe("color");
      expect(body).toBe(mono.variants.color!.svg);
      expect(res.headers.get("x-variant-restricted")).toBeNull();
    }
  });

  test("requests count against the svg bucket (rate-limit headers, GET /v1/usage)", async () => {
    const key = await t.key("free");
    const first = await t.get(`/v1/svg/${mono.slug}`, key);
    expect(first.headers.get("x-ratelimit-limit")).toBe("50");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("49");
    await t.get(`/v1/svg/${mono.slug}?variant=color`, key);
    const usage = await (await t.get("/v1/usage", key)).json();
    expect(usage.endpoints.svg).toEqual({ used: 2, limit: 50 });
  });
});

describe("GET /v1/svg/{slug}: conditional requests", () => {
  test("If-None-Match with the current ETag: 304, no body, same validators", async () => {
    const first = await t.get(`/v1/svg/${mono.slug}`, pro);
    const etag = first.headers.get("etag")!;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await t.get(`/v1/svg/${mono.slug}`, pro, { "if-none-match": inm });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("x-svg-variant")).toBe("mono");
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    }
  });

  test("a stale ETag gets the full 200", async () => {
    const res = await t.get(`/v1/svg/${mono.slug}?variant=color`, pro, {
      "if-none-match": `"${sha256(mono.variants.mono!.svg)}"`,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(mono.variants.color!.svg);
  });

  test("a 304 counts against the bucket like a 200", async () => {
    const key = await t.key("free");
    const first = await t.get(`/v1/svg/${mono.slug}`, key);
    const res = await t.get(`/v1/svg/${mono.slug}`, key, {
      "if-none-match": first.headers.get("etag")!,
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("48");
  });
});
