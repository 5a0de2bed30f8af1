/**
 * The catalog grows at run time: a discovered brand goes into the catalog database's writable
 * overlay (src/catalog/store/catalog-db.ts) and is found by slug, domain and search at once, through the
 * real app; taken down, it is gone from all three. The built file stays as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DiscoveryRecord } from "../../src/catalog/discovery/store/port";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

let t: TestApp;
let key: string;

const svg =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M2 2h20v20H2z" fill="#123456"/></svg>';

function record(domain: string, status: DiscoveryRecord["status"], id: number): DiscoveryRecord {
  return {
    domain,
    status,
    at: new Date().toISOString(),
    reason: status === "found" ? null : "taken down by an operator",
    brandId: id,
    slug: "quorvexa",
    created: true,
    name: "Quorvexa Labs",
    brandColor: "123456",
    pageUrl: `https://${domain}/`,
    aliases: [],
    variants:
      status === "found" ? { color: { svg, sha256: "0".repeat(64), source: "web:icon" } } : {},
    assets: [],
  };
}

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(async () => {
  await t.close();
});

describe("a discovered brand", () => {
  test("is found by slug, domain and search right after it is stored, and gone after a takedown", async () => {
    const before = t.deps.catalog.size;
    const id = 9_000_001;
    await expectError(await t.get("/v1/catalog/quorvexa", key), 404, "service_not_found");
    t.deps.enrichment.applyDiscovery(record("quorvexa.com", "found", id));
    expect(t.deps.catalog.size).toBe(before + 1);

    const bySlug = await t.get("/v1/catalog/quorvexa", key);
    expect(bySlug.status).toBe(200);
    expect(((await bySlug.json()) as { name: string }).name).toBe("Quorvexa Labs");
    const byDomain = await t.get("/v1/brand?domain=www.quorvexa.com", key);
    expect(byDomain.status).toBe(200);
    expect(((await byDomain.json()) as { slug: string }).slug).toBe("quorvexa");
    for (const q of ["quorvexa", "quorv", "quorvexa labs", "qourvexa"]) {
      const r = await t.get(`/v1/search?q=${encodeURIComponent(q)}`, key);
      const body = (await r.json()) as { matches: { slug: string }[] };
      expect([q, body.matches[0]?.slug]).toEqual([q, "quorvexa"]);
    }
    const art = await t.get("/v1/svg/quorvexa?variant=color", key);
    expect(art.status).toBe(200);
    expect(await art.text()).toContain("<svg");

    t.deps.enrichment.applyDiscovery(record("quorvexa.com", "taken_down", id));
    expect(t.deps.catalog.size).toBe(before);
    await expectError(await t.get("/v1/catalog/quorvexa", key), 404, "service_not_found");
    await expectError(await t.get("/v1/brand?domain=quorvexa.com", key), 404, "domain_not_found");
    const gone = await t.get("/v1/search?q=quorvexa", key);
    expect(((await gone.json()) as { total: number }).total).toBe(0);
  }, 60_000);

  test("a thousand added brands are each found at once, with no rebuild", async () => {
    const catalog = t.deps.catalog;
    const base = t.deps.catalog.brand("github");
    if (!base) throw new Error("github is in the built catalog");
    const version = catalog.version;
    const size = catalog.size;
    const changes: (string | undefined)[] = [];
    catalog.onChange((b) => changes.push(b?.slug));
    for (let i = 0; i < 1000; i++)
      catalog.add({
        ...base,
        id: 9_100_000 + i,
        slug: `zylqen-${i}`,
        name: `Zylqen ${i}`,
        aliases: [],
        formerSlugs: [],
        tickers: [],
        domains: [`zylqen-${i}.io`],
      });
    // each add is a change of that one brand (rows in the overlay), never a full change that
    // re-indexes the catalog, and no rebuild
    expect(changes).toEqual(Array.from({ length: 1000 }, (_, i) => `zylqen-${i}`));
    expect(catalog.version).toBe(version);
    expect(catalog.size).toBe(size + 1000);
    for (const i of [0, 517, 999]) {
      expect(catalog.brand(`zylqen-${i}`)?.name).toBe(`Zylqen ${i}`);
      expect(t.deps.brands.resolveHost(`zylqen-${i}.io`)?.slug).toBe(`zylqen-${i}`);
      expect(t.deps.search.search(`zylqen ${i}`, 5)[0]?.slug).toBe(`zylqen-${i}`);
    }
    // a built brand's domain is not taken over by an added brand that lists it
    catalog.add({
      ...base,
      id: 9_200_000,
      slug: "not-github",
      name: "Not GitHub",
      domains: ["github.com"],
    });
    expect(t.deps.brands.resolveHost("github.com")?.slug).toBe("github");
  }, 60_000);
});
