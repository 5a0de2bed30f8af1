import { expect, test } from "bun:test";
import {
  addLegacyDomains,
  domainOverrides,
  enrichDomains,
} from "../../../../scripts/catalog/steps/enrich";
import type { Brand } from "../../../../src/catalog/built-catalog";
import { brandOf, draft } from "./draft";

const brand = (id: number, slug: string, over: Partial<Brand> = {}) =>
  brandOf(slug, { id, ...over });

test("legacy domains join the domain overrides without changing the fixture", () => {
  const fixtures = {
    domains: { acme: ["acme.com"] },
    legacy: { $comment: { x: "y" }, acme: { "acme.co.uk": "UK site", "acme.com": "main" } },
  };
  expect(domainOverrides(fixtures)).toEqual({ acme: ["acme.com", "acme.co.uk"] });
  expect(fixtures.domains.acme).toEqual(["acme.com"]);
});

test("brands get the domains their URLs name", () => {
  const brands = [brand(1, "stripe", { sourceUrl: "https://stripe.com/newsroom/brand-assets" })];
  const report = enrichDomains(brands, [draft("stripe")], { domains: {}, legacy: {} });
  expect(brands[0]?.domains).toEqual(["stripe.com"]);
  expect(report.brandsWithDomain).toBe(1);
});

test("directory entries get legacy domains no other brand holds", () => {
  const brands = [brand(1, "acme", { domains: ["acme.com"] })];
  const entries = [{ slug: "acme-group", domains: ["acmegroup.com"] }];
  addLegacyDomains(brands, entries, {
    "acme-group": { "acme.com": "held by acme", "acme-group.de": "German site" },
  });
  expect(entries[0]?.domains).toEqual(["acmegroup.com", "acme-group.de"]);
});
