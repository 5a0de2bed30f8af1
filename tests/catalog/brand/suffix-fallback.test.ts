/**
 * Domains under other public suffixes and curated legacy domains, on the real built
 * catalog through GET /v1/brand, plus the resolver's rule on a small catalog of its own.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BrandResolver } from "../../../src/catalog/brand/service";
import { CatalogService } from "../../../src/catalog/service";
import { makeApp, type TestApp } from "../../support/app";
import { brandOf } from "../../support/catalog";

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await makeApp();
  key = await app.key("pro");
});
afterAll(() => app.close());

const slugOf = async (domain: string) => {
  const res = await app.get(`/v1/brand?domain=${encodeURIComponent(domain)}`, key);
  return res.status === 200 ? ((await res.json()) as { slug: string }).slug : res.status;
};

describe("other public suffixes resolve to the same label's brand", () => {
  test.each([
    ["bmw.de", "bmw"],
    ["volkswagen.de", "volkswagen"],
    ["google.co.uk", "google"],
    ["www.google.co.uk", "google"],
    ["amazon.co.jp", "amazon"],
    ["amazon.com.br", "amazon"],
    ["zalando.de", "zalando"],
    ["rakuten.co.jp", "rakuten"],
    ["https://www.airbnb.co.uk/rooms/1", "airbnb"],
  ])("%s -> %s", async (domain, slug) => {
    expect(await slugOf(domain)).toBe(slug);
  });

  test("a label nobody owns under .com or elsewhere stays unknown", async () => {
    expect(await slugOf("no-such-brand-label-xyz.co.uk")).toBe(404);
  });
});

describe("curated legacy and corporate domains (fixtures/legacy-domains.json)", () => {
  const fixture: Record<string, Record<string, string>> = JSON.parse(
    readFileSync(join(import.meta.dir, "../../../fixtures/legacy-domains.json"), "utf8"),
  );
  test("every entry has a comment and resolves to its brand", async () => {
    let checked = 0;
    for (const [slug, entries] of Object.entries(fixture)) {
      if (slug.startsWith("$")) continue;
      for (const [domain, why] of Object.entries(entries)) {
        expect(why.length).toBeGreaterThan(3);
        expect([domain, await slugOf(domain)]).toEqual([domain, slug]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
  test.each([
    ["booking.com", "bookingdotcom"],
    ["bookingholdings.com", "bookingdotcom"],
    ["postman.com", "postman"],
    ["getpostman.com", "postman"],
    ["go.dev", "go"],
    ["golang.org", "go"],
    ["goldmansachs.com", "goldmansachs"],
    ["gs.com", "goldmansachs"],
    ["kakao.com", "kakao"],
    ["kakaocorp.com", "kakao"],
  ])("%s -> %s", async (domain, slug) => {
    expect(await slugOf(domain)).toBe(slug);
  });
});

describe("the fallback rule on a catalog of its own", () => {
  const brand = (id: number, slug: string, domains: string[]) =>
    brandOf(slug, { id, domains, sources: [] });
  const brands = [
    brand(1, "acme", ["acme.com"]),
    brand(2, "acmede", ["acme.de"]), // another brand claims acme.de
    brand(3, "zeta", ["zeta.io"]), // main domain not under .com
    brand(4, "twin1", ["twin.org"]),
    brand(5, "twin2", ["twin.net"]), // the label "twin" names two brands: no guess
    brand(6, "otto-fi", ["otto.fi"]), // one country's site
    brand(7, "lidl", ["lidl.de", "lidl.fr"]), // national sites in two countries
    brand(8, "solo", ["solo.com.mk", "solo.mk"]), // two suffixes of one country
    brand(9, "mixed", ["mixed.ch"]),
    brand(10, "mixed2", ["mixed.at", "mixed.be"]), // the label names two brands: no guess
  ];
  const resolver = new BrandResolver(CatalogService.of(brands));
  const resolve = (host: string) => resolver.resolveHost(host)?.slug ?? null;
  test("same label under .com first, a domain another brand claims wins", () => {
    expect(resolve("acme.co.uk")).toBe("acme");
    expect(resolve("shop.acme.fr")).toBe("acme");
    expect(resolve("acme.de")).toBe("acmede");
  });
  test("else the one brand whose registrable domains use the label", () => {
    expect(resolve("zeta.de")).toBe("zeta");
    expect(resolve("twin.de")).toBeNull();
  });
  test("one country's site speaks for that country alone; sites in two countries are international", () => {
    expect(resolve("otto.de")).toBeNull();
    expect(resolve("lidl.bg")).toBe("lidl");
    expect(resolve("lidl.co.uk")).toBe("lidl");
    expect(resolve("solo.de")).toBeNull();
    expect(resolve("mixed.de")).toBeNull();
  });
  test(".com itself never falls back", () => {
    expect(resolve("zeta.com")).toBeNull();
  });
  test("a generic suffix other than .com never falls back (a namesake's .org is not the .com's brand)", () => {
    expect(resolve("acme.org")).toBeNull();
    expect(resolve("zeta.net")).toBeNull();
    expect(resolve("acme.co.uk")).toBe("acme");
  });
});
