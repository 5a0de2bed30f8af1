/**
 * The brand directory: name-suggestion-index companies in the real built catalog,
 * through the real app: domains resolve, entries without artwork answer the placeholder, the
 * extra fields are documented and served, GET /v1/catalog filters on artwork, and search ranks
 * a brand with artwork above a directory-only namesake.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { parentOf } from "../../scripts/catalog/nsi";
import { BrandResponse } from "../../src/catalog/brand/model";
import type { Brand } from "../../src/catalog/built-catalog";
import { ServiceResponse } from "../../src/catalog/model";
import { hasArtwork } from "../../src/catalog/service";
import { makeApp, type TestApp } from "../support/app";

let t: TestApp;
let free: string;
beforeAll(async () => {
  t = await makeApp();
  free = await t.key("free");
});
afterAll(() => t.close());

let brands: Brand[] | null = null;
/** every brand, read once (no test here changes the catalog) */
const all = () => {
  brands ??= t.deps.catalog.all();
  return brands;
};
const directoryOnly = () =>
  all().filter((b) => !hasArtwork(b) && b.sources.join() === "name-suggestion-index");

describe("directory entries in the catalog", () => {
  test("thousands of companies without artwork, each with a domain and a Wikidata id", () => {
    const entries = directoryOnly();
    expect(entries.length).toBeGreaterThan(10_000);
    for (const b of entries) {
      expect(b.domains.length).toBeGreaterThan(0);
      expect(b.wikidata).toMatch(/^Q\d+$/);
      expect(b.variants).toEqual({});
    }
  });
  test("no domain is claimed twice across catalog and directory", () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const b of all()) {
      for (const d of b.domains) {
        if (seen.has(d)) twice.push(`${d}: ${seen.get(d)} and ${b.slug}`);
        seen.set(d, b.slug);
      }
    }
    expect(twice).toEqual([]);
  });
});

describe("GET /v1/brand on a directory company", () => {
  test("allianz.com: the company, variants [], description, wikidata and links", async () => {
    const res = await t.get("/v1/brand?domain=allianz.com", free);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(BrandResponse, body)).toBe(true);
    expect(body.name).toBe("Allianz");
    expect(body.variants).toEqual([]);
    expect(body.brandColor).toBeNull();
    expect(body.wikidata).toMatch(/^Q\d+$/);
    expect(typeof body.description).toBe("string");
    expect(body.links.website).toMatch(/^https?:\/\/[^/]*allianz/);
  });
  test("a business e-mail resolves too", async () => {
    const res = await t.get(`/v1/brand?email=${encodeURIComponent("jane@statefarm.com")}`, free);
    expect(res.status).toBe(200);
    expect((await res.json()).name).toBe("State Farm");
  });
  test("parent brands keep their domains: amazon.com, mcdonalds.com, shell.com, bp.com", async () => {
    for (const [domain, name] of [
      ["amazon.com", "Amazon"],
      ["mcdonalds.com", "McDonald's"],
      ["shell.com", "Shell"],
      ["bp.com", "BP"],
    ]) {
      const body = await (await t.get(`/v1/brand?domain=${domain}`, free)).json();
      expect([domain, body.name]).toEqual([domain, name]);
    }
  });
  test("a catalog brand merged with its directory entry keeps its artwork and gains the fields", async () => {
    const body = await (await t.get("/v1/brand?domain=mcdonalds.com", free)).json();
    expect(body.variants).toContain("mono");
    expect(body.wikidata).toBe("Q38076");
  });
});

describe("GET /v1/svg of a brand without artwork", () => {
  test("the spec's placeholder with X-Svg-Variant: placeholder and max-age 3600", async () => {
    const res = await t.get("/v1/svg/allianz", free);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-svg-variant")).toBe("placeholder");
    expect(res.headers.get("cache-control")).toContain("max-age=3600");
    expect(await res.text()).toContain("<svg");
  });
});

describe("placeholder=monogram on the asset routes", () => {
  test("SVG: the brand's initials, same headers as the placeholder", async () => {
    const res = await t.get("/v1/svg/state-farm?placeholder=monogram", free);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-svg-variant")).toBe("placeholder");
    expect(res.headers.get("cache-control")).toContain("max-age=3600");
    const svg = await res.text();
    expect(svg).toContain(">SF</text>");
    expect(svg).toContain("<title>State Farm</title>");
    const generic = await (await t.get("/v1/svg/state-farm", free)).text();
    expect(generic).not.toContain("<text");
    expect(res.headers.get("etag")).not.toBe(
      (await t.get("/v1/svg/state-farm", free)).headers.get("etag"),
    );
  });
  test("PNG: a rendered lettermark with the placeholder's headers", async () => {
    const res = await t.get("/v1/png/allianz?placeholder=monogram&size=64", free);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-svg-variant")).toBe("placeholder");
    expect(res.headers.get("cache-control")).toContain("max-age=3600");
  });
  test("a brand with artwork is served its artwork", async () => {
    const res = await t.get("/v1/svg/mcdonalds?placeholder=monogram", free);
    expect(res.headers.get("x-svg-variant")).toBe("mono");
  });
  test("placeholder=other is 422 validation_error naming the field", async () => {
    const res = await t.get("/v1/svg/allianz?placeholder=letters", free);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.error).toBe("validation_error");
    expect(body.message).toContain("placeholder");
  });
  test("initials skip minor words and punctuation", async () => {
    const { initials } = await import("../../src/assets/monogram");
    expect(initials("Bank of America")).toBe("BA");
    expect(initials("McDonald's")).toBe("M");
    expect(initials("7-Eleven")).toBe("7E");
    expect(initials("Crédit Agricole")).toBe("CA");
  });
});

describe("GET /v1/catalog?artwork=", () => {
  test("default lists every entry; true and false split the catalog", async () => {
    const total = (await (await t.get("/v1/catalog?limit=1", free)).json()).total;
    const withArt = await (await t.get("/v1/catalog?artwork=true&limit=200", free)).json();
    const without = await (await t.get("/v1/catalog?artwork=false&limit=200", free)).json();
    expect(total).toBe(all().length);
    expect(withArt.total + without.total).toBe(total);
    expect(withArt.total).toBe(all().filter(hasArtwork).length);
    const bySlug = new Map(all().map((b) => [b.slug, b]));
    expect(withArt.items.length).toBeGreaterThan(0);
    expect(without.items.length).toBeGreaterThan(0);
    for (const item of withArt.items) expect(hasArtwork(bySlug.get(item.slug) as never)).toBe(true);
    for (const item of without.items) {
      expect(Value.Check(ServiceResponse, item)).toBe(true);
      expect(hasArtwork(bySlug.get(item.slug) as never)).toBe(false);
    }
    expect(without.items.some((i: { wikidata?: string }) => i.wikidata)).toBe(true);
  });
  test("pages of the filtered list are contiguous", async () => {
    const a = await (await t.get("/v1/catalog?artwork=false&limit=10", free)).json();
    const b = await (await t.get("/v1/catalog?artwork=false&limit=5&offset=5", free)).json();
    expect(b.items.map((i: { id: number }) => i.id)).toEqual(
      a.items.slice(5).map((i: { id: number }) => i.id),
    );
  });
  for (const bad of ["yes", "1", "TRUE", ""]) {
    test(`artwork=${bad} is 422 validation_error naming the field`, async () => {
      const res = await t.get(`/v1/catalog?artwork=${bad}`, free);
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body.error).toBe("validation_error");
      expect(body.message).toContain("artwork");
    });
  }
});

describe("search covers the directory", () => {
  const top = async (q: string) =>
    (await (await t.get(`/v1/search?q=${encodeURIComponent(q)}`, free)).json()).matches;
  test("a directory company is found by name", async () => {
    const r = await top("allianz");
    expect(r[0].slug).toBe("allianz");
  });
  test("a brand with artwork ranks above its directory-only namesake", async () => {
    const namesake = directoryOnly().find((b) => b.slug.startsWith("vattenfall-q"));
    expect(namesake).toBeDefined();
    const r = await top("vattenfall");
    const slugs = r.map((b: { slug: string }) => b.slug);
    expect(slugs[0]).toBe("vattenfall");
    expect(slugs).toContain(namesake?.slug);
  });
});

describe("OpenAPI", () => {
  test("documents description, wikidata, links and the artwork filter", async () => {
    const doc = JSON.stringify(await (await t.req("/swagger/json")).json());
    for (const word of ['"wikidata"', '"links"', '"description"', '"artwork"']) {
      expect(doc).toContain(word);
    }
  });
});

describe("parent-brand rule", () => {
  const c = (qid: string, name: string, weight = 1, label: string | null = null) => ({
    qid,
    name,
    label,
    otherNames: [],
    nativeNames: [],
    weight,
    hosts: [],
    links: {},
  });
  test("the name that is the domain's label wins over sub-brands", () => {
    const r = parentOf("amazon.com", [c("Q1", "Amazon Books", 50), c("Q2", "Amazon", 3)], {});
    expect(r.winner?.qid).toBe("Q2");
  });
  test("the name every other claimant's name extends wins", () => {
    const r = parentOf("example.com", [c("Q1", "Acme Express"), c("Q2", "Acme")], {});
    expect(r.winner?.qid).toBe("Q2");
  });
  test("two named after the domain: the one most entries point to, at twice the next", () => {
    const claim = [c("Q1", "McDonald's", 900), c("Q2", "McDonald's", 10), c("Q3", "McCafé", 400)];
    expect(parentOf("mcdonalds.com", claim, {}).winner?.qid).toBe("Q1");
    const even = [c("Q1", "Verizon", 10), c("Q2", "Verizon", 8)];
    expect(parentOf("verizon.com", even, {}).winner).toBeNull();
  });
  test("no claimant named after the domain: nobody, unless the fixture says", () => {
    const hotels = [c("Q1", "Holiday Inn Express", 900), c("Q2", "Kimpton", 10)];
    expect(parentOf("ihg.com", hotels, {}).winner).toBeNull();
    expect(parentOf("ihg.com", hotels, { "ihg.com": { wikidata: "Q2" } }).winner?.qid).toBe("Q2");
    expect(parentOf("ihg.com", hotels, { "ihg.com": { wikidata: null } }).winner).toBeNull();
  });
});
