/**
 * GET /v1/brand through the real app (embedded store in a temp dir, real catalog).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VARIANTS } from "../../../src/catalog/built-catalog";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;

interface Body {
  error?: string;
  message?: string;
  slug?: string;
  [k: string]: unknown;
}

const brand = async (qs: string, k = key) => {
  const r = await t.get(`/v1/brand?${qs}`, k);
  return { status: r.status, headers: r.headers, body: (await r.json()) as Body };
};
const byDomain = (d: string) => brand(`domain=${encodeURIComponent(d)}`);
const byEmail = (e: string) => brand(`email=${encodeURIComponent(e)}`);

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(async () => {
  await t.deps.enrichment.idle();
  await t.close();
});

describe("response", () => {
  test("BrandResponse with every field, Cache-Control public, max-age=300", async () => {
    const r = await byDomain("github.com");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("public, max-age=300");
    expect(Object.keys(r.body).sort()).toEqual(
      [
        "_css",
        "_notice",
        "artwork",
        "brandColor",
        "contrastTextColor",
        "darkModeColor",
        "id",
        "name",
        "provenance",
        "slug",
        "variants",
        "verified",
        "verifiedAt",
      ].sort(),
    );
    const gh = t.deps.catalog.brand("github");
    expect(r.body).toMatchObject({ id: gh?.id, slug: "github", name: "GitHub" });
    expect(r.body.brandColor).toMatch(/^[0-9a-f]{6}$/);
    expect(r.body.contrastTextColor).toMatch(/^(000000|ffffff)$/);
    expect(typeof r.body.verified).toBe("boolean");
    expect(r.body.verified).toBe(r.body.verifiedAt !== null);
    const variants = r.body.variants as string[];
    expect(variants).toContain("mono");
    // known names only, in the fixed order
    expect(variants).toEqual(VARIANTS.filter((v) => variants.includes(v)));
    // every served variant says where it came from: the catalog's icon packages here
    expect(r.body.provenance).toEqual(Object.fromEntries(variants.map((v) => [v, "catalog"])));
    expect(r.body._css).toEqual({
      "--brand-color": `#${r.body.brandColor}`,
      "--brand-color-dark": `#${r.body.darkModeColor}`,
      "--brand-color-contrast": `#${r.body.contrastTextColor}`,
    });
    expect(JSON.stringify(r.body)).not.toContain("<svg");
  });
  test("artwork lists each source's package, licence and upstream URL with its variants", async () => {
    const gh = await byDomain("github.com");
    const sources = gh.body.artwork as { source: string; licence: string; variants: string[] }[];
    expect(sources.flatMap((s) => s.variants).sort()).toEqual(
      [...(gh.body.variants as string[])].sort(),
    );
    expect(sources.find((s) => s.source === "simple-icons")?.licence).toBe("CC0-1.0");
    // a brand drawn by @thesvg/icons: that icon's own licence and file
    const bnp = await byDomain("group.bnpparibas");
    expect(bnp.body.slug).toBe("bnp-paribas");
    expect(bnp.body.artwork).toEqual([
      {
        source: "thesvg",
        package: "@thesvg/icons",
        licence: "CC0-1.0",
        url: expect.stringMatching(
          /^https:\/\/unpkg\.com\/@thesvg\/icons@[\d.]+\/dist\/bnp-paribas\.js$/,
        ),
        variants: expect.arrayContaining(["wordmark"]),
      },
    ]);
    // directory entries have no artwork and no artwork field
    const stc = await byDomain("stc.se");
    expect(stc.body.artwork).toBeUndefined();
  });
  test("errors carry no public caching", async () => {
    const r = await byDomain("no-such-brand-zz.example");
    expect(r.headers.get("cache-control")).not.toBe("public, max-age=300");
  });
});

describe("domain input is forgiving", () => {
  test.each([
    "github.com",
    "GitHub.COM",
    "https://github.com",
    "https://github.com/org/repo?tab=readme#top",
    "http://www.github.com:8080/",
    "github.com.",
    "  github.com ",
    "WWW.GITHUB.COM",
    "user@github.com",
    "ＧＩＴＨＵＢ.ｃｏｍ",
  ])("%p resolves to GitHub", async (d) => {
    const r = await byDomain(d);
    expect(r.status).toBe(200);
    expect(r.body.slug).toBe("github");
  });
  test("a subdomain without a brand of its own resolves through its registrable domain", async () => {
    expect((await byDomain("api.github.com")).body.slug).toBe("github");
    expect((await byDomain("a.b.c.stripe.com")).body.slug).toBe("stripe");
  });
  test("a host with its own brand wins over its registrable domain", async () => {
    expect((await byDomain("google.com")).body.slug).toBe("google");
    expect((await byDomain("mail.google.com")).body.slug).toBe("gmail");
    expect((await byDomain("drive.google.com")).body.slug).toBe("googledrive");
    expect((await byDomain("https://docs.google.com/document/d/1")).body.slug).toBe("googledocs");
    // the most specific domain on the chain: inbox.mail.google.com -> mail.google.com
    expect((await byDomain("inbox.mail.google.com")).body.slug).toBe("gmail");
    expect((await byDomain("news.google.com")).body.slug).not.toBe("gmail");
  });
  test("internationalized names are converted (punycode) before the lookup", async () => {
    const r = await byDomain("bücher-zz-unknown.de");
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("domain_not_found");
    expect(r.body.message).toContain("xn--");
  });
  test("a site under a private public suffix is not the hosting brand", async () => {
    const r = await byDomain("someone-zz.github.io");
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("domain_not_found");
  });
});

describe("e-mail", () => {
  test("business address resolves through its domain, subdomains included", async () => {
    expect((await byEmail("alice@stripe.com")).body.slug).toBe("stripe");
    expect((await byEmail("Alice.Smith+x@eng.stripe.com")).body.slug).toBe("stripe");
    expect((await byEmail("bob@mail.google.com")).body.slug).toBe("gmail");
  });
  test.each([
    ["consumer provider", "alice@gmail.com"],
    ["consumer provider, other country", "alice@yahoo.co.uk"],
    ["consumer provider subdomain", "alice@mail.yahoo.co.uk"],
    ["malformed", "alice"],
    ["malformed", "alice@"],
    ["malformed", "@github.com"],
    ["malformed", "a b@github.com"],
    ["IP literal", "alice@[192.168.0.1]"],
    ["bare IP", "alice@192.168.0.1"],
    ["no registrable part", "alice@co.uk"],
    ["no registrable part", "alice@localhost"],
  ])("%s (%s): 422 email_not_brand_domain", async (_label, email) => {
    const r = await byEmail(email);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("email_not_brand_domain");
    expect(typeof r.body.message).toBe("string");
  });
  test("a consumer domain passed as domain= still names its brand", async () => {
    expect((await byDomain("gmail.com")).body.slug).toBe("gmail");
  });
  test("valid business domain without a brand: 404 domain_not_found", async () => {
    const r = await byEmail("alice@no-such-brand-zz.com");
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("domain_not_found");
  });
});

describe("validation_error and boundaries", () => {
  test("neither parameter", async () => {
    const r = await t.get("/v1/brand", key);
    expect(r.status).toBe(422);
    expect(((await r.json()) as Body).error).toBe("validation_error");
  });
  test("both parameters", async () => {
    const r = await brand("domain=github.com&email=alice@stripe.com");
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_error");
    expect(r.body.message).toContain("not two");
  });
  test("domain of 2 characters: 422; 3 characters: looked up", async () => {
    const short = await byDomain("a.b");
    expect(short.status).toBe(404);
    const tooShort = await byDomain("ab");
    expect(tooShort.status).toBe(422);
    expect(tooShort.body.error).toBe("validation_error");
    expect(tooShort.body.message).toContain("domain");
    const empty = await brand("domain=");
    expect(empty.body.error).toBe("validation_error");
  });
  test("domain of 253 characters is looked up; 254 is 422", async () => {
    const label = "a".repeat(61);
    const exact = `b.${[label, label, label, label].join(".")}.com`; // 2 + 4*61 + 3 + 4
    expect(exact).toHaveLength(253);
    const found = await byDomain(exact);
    expect(found.status).toBe(404);
    expect(found.body.error).toBe("domain_not_found");
    const over = await byDomain(`${exact}x`);
    expect(over.status).toBe(422);
    expect(over.body.error).toBe("validation_error");
  });
  test("email of 254 characters is checked; 255 is 422 validation_error", async () => {
    const domain = `${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.com`; // 195
    const email254 = `${"a".repeat(254 - domain.length - 1)}@${domain}`;
    expect(email254).toHaveLength(254);
    const ok = await byEmail(email254);
    expect(ok.status).toBe(404);
    const over = await byEmail(`a${email254}`);
    expect(over.status).toBe(422);
    expect(over.body.error).toBe("validation_error");
    expect(over.body.message).toContain("email");
  });
  test("domain that is no host name or is an IP address: 422 validation_error", async () => {
    for (const d of ["exa mple.com", "a..b.com", "10.0.0.1", "[::1]", "https://"]) {
      const r = await byDomain(d);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("validation_error");
    }
  });
  test("unknown domain: 404 domain_not_found", async () => {
    const r = await byDomain("no-such-brand-zz.example");
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      error: "domain_not_found",
      message: "No brand matches the domain no-such-brand-zz.example.",
    });
  });
});

describe("auth and metering", () => {
  test("no key: 401", async () => {
    const r = await t.req("/v1/brand");
    expect(r.status).toBe(401);
    expect(((await r.json()) as Body).error).toBe("invalid_api_key");
  });
  test("counts against the domain bucket", async () => {
    const free = await t.key("free");
    const r = await brand("domain=github.com", free);
    expect(r.headers.get("x-ratelimit-limit")).toBe("20");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("19");
    await brand("email=alice@gmail.com", free);
    const usage = (await (await t.get("/v1/usage", free)).json()) as {
      endpoints: Record<string, { used: number }>;
    };
    expect(usage.endpoints.domain?.used).toBe(2);
    expect(usage.endpoints.search?.used).toBe(0);
  });
});

describe("OpenAPI", () => {
  test("the route documents its choices and every status", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<
        string,
        { get?: { description?: string; responses?: Record<string, unknown> } }
      >;
    };
    const op = doc.paths["/v1/brand"]?.get;
    expect(op?.description).toContain("email_not_brand_domain");
    expect(Object.keys(op?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "404", "422", "429"]),
    );
  });
});
