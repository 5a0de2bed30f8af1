/**
 * The search response cache (src/catalog/search/responses.ts) on the real built catalog: a
 * cached body is the body the uncached path serializes, and it goes when the catalog reloads or
 * an entry it holds changes (searched fields or not); through the app, cached answers are
 * still metered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Brand } from "../../../src/catalog/built-catalog";
import { SearchResponses } from "../../../src/catalog/search/responses";
import { SearchIndex } from "../../../src/catalog/search/service";
import { normalizeQuery } from "../../../src/catalog/search/text";
import { CatalogService } from "../../../src/catalog/service";
import { makeApp, type TestApp } from "../../support/app";
import { sharedCatalogSource } from "../../support/catalog";
import { readList } from "../lists/lists";

const source = sharedCatalogSource();
const built = await source.load();
/** the built catalog's database: a CatalogService over it keeps its changes in its own overlay */
const builtFile = await source.file();

/** building an index over the whole catalog takes a second or more on a loaded machine */
const SLOW = 60_000;

/** A catalog and index of their own, for a test that changes entries or reloads. */
function fresh(limits?: { maxEntries?: number; maxChars?: number }) {
  const catalog = new CatalogService(source);
  catalog.use(builtFile);
  const index = new SearchIndex(catalog);
  return { catalog, index, responses: new SearchResponses(index, catalog, limits) };
}

let readOnly: ReturnType<typeof fresh> | null = null;
/**
 * A new response cache over one catalog and index shared by the tests that change no searched
 * field (a test that changes an entry puts it back).
 */
function unchanged(limits?: { maxEntries?: number; maxChars?: number }) {
  readOnly ??= fresh();
  const { catalog, index } = readOnly;
  return { catalog, index, responses: new SearchResponses(index, catalog, limits) };
}

/** What the route answered before the cache: its object, serialized (Elysia uses JSON.stringify). */
function reference(catalog: CatalogService, index: SearchIndex, query: string, limit: number) {
  const q = normalizeQuery(query);
  const matches = index.search(q, limit).map((b) => catalog.viewOf(b));
  return JSON.stringify({ matches, query: q, total: matches.length });
}

const queries = [
  ...readList("queries.txt").map((e) => e.input),
  "  Google \t DRIVE ",
  "ＧｉｔＨｕｂ",
  "Яндекс",
  "zzzzzz",
  'a"b\\c',
];

describe("cached == uncached", () => {
  test(
    `every query of tests/catalog/lists/queries.txt (${queries.length}) at limits 1, 5, 20 and 50`,
    () => {
      const { catalog, index, responses } = unchanged();
      let nonEmpty = 0;
      for (const q of queries)
        for (const limit of [1, 5, 20, 50]) {
          const want = reference(catalog, index, q, limit);
          expect(responses.json(q, limit)).toBe(want); // miss: computed and stored
          expect(responses.json(q, limit)).toBe(want); // hit
          if (JSON.parse(want).total > 0) nonEmpty++;
        }
      expect(responses.stats.entries).toBeGreaterThan(queries.length); // it did cache
      expect(nonEmpty).toBeGreaterThan(queries.length * 3); // and the answers are real matches
    },
    SLOW,
  );

  test(
    "the key is the normalized query and the limit",
    () => {
      const { responses } = unchanged();
      const a = responses.json("GitHub", 5);
      expect(responses.json("  github ", 5)).toBe(a);
      expect(responses.stats.entries).toBe(1);
      expect(JSON.parse(responses.json("github", 1)).total).toBe(1);
      expect(responses.stats.entries).toBe(2);
    },
    SLOW,
  );
});

const brandBySlug = (catalog: CatalogService, slug: string) => catalog.brand(slug) as Brand;

describe("invalidation", () => {
  test(
    "an entry's colors change (enrichment): bodies holding it change, others stay cached",
    () => {
      // not a searched field: the shared index is only refreshed, and the brand put back after
      const { catalog, index, responses } = unchanged();
      responses.json("stripe", 5);
      const other = responses.json("figma", 5);
      const entriesBefore = responses.stats.entries;
      const stripe = brandBySlug(catalog, "stripe");
      try {
        catalog.update({
          ...stripe,
          colors: [...stripe.colors, { role: "accent", hex: "123456", source: "derived" }],
        });
        expect(responses.stats.entries).toBe(entriesBefore - 1);
        const after = responses.json("stripe", 5);
        expect(after).toBe(reference(catalog, index, "stripe", 5));
        expect(after).toContain('"hex":"123456"');
        expect(responses.json("figma", 5)).toBe(other);
      } finally {
        catalog.update(stripe);
      }
    },
    SLOW,
  );

  test(
    "an entry's searched fields change: the whole cache goes, answers follow the new name",
    () => {
      const { catalog, index, responses } = fresh();
      const before = JSON.parse(responses.json("zqxwvhub", 5));
      expect(before.total).toBe(0);
      expect(JSON.parse(responses.json("github", 1)).matches[0].slug).toBe("github");
      catalog.update({ ...brandBySlug(catalog, "github"), name: "Zqxwvhub" });
      expect(responses.stats.entries).toBe(0);
      const renamed = JSON.parse(responses.json("zqxwvhub", 5));
      expect(renamed.matches[0].slug).toBe("github");
      expect(responses.json("zqxwvhub", 5)).toBe(reference(catalog, index, "zqxwvhub", 5));
      expect(responses.json("github", 20)).toBe(reference(catalog, index, "github", 20));
    },
    SLOW,
  );

  test(
    "popularity changes (sources): the whole cache goes, the ranking follows",
    () => {
      // popularity is not a searched field either: shared index, the brand put back after
      const { catalog, index, responses } = unchanged();
      const slugs = (json: string) => JSON.parse(json).matches.map((m: { slug: string }) => m.slug);
      const before = slugs(responses.json("amaz", 10));
      const target = before[1] as string; // a prefix match behind Amazon
      const top = responses.json("amaz", 1); // without the target: only re-ranking can bring it in
      expect(slugs(top)).toEqual([before[0]]);
      const b = brandBySlug(catalog, target);
      try {
        catalog.update({
          ...b,
          sources: [...b.sources, ...Array.from({ length: 30 }, (_, i) => `x${i}`)],
        });
        expect(responses.stats.entries).toBe(0);
        const now = responses.json("amaz", 1);
        expect(now).toBe(reference(catalog, index, "amaz", 1));
        expect(slugs(now)[0]).toBe(target);
      } finally {
        catalog.update(b);
      }
    },
    SLOW,
  );

  test(
    "a catalog reload (new version) empties the cache",
    () => {
      const { catalog, index, responses } = fresh();
      responses.json("github", 5);
      // a reload to a few hundred brands without GitHub: installing the whole catalog again
      // would only cost time
      const gone = {
        ...built,
        brands: built.brands.filter((b) => b.slug !== "github").slice(0, 500),
        version: `${built.version}-next`,
      };
      catalog.install(gone);
      expect(responses.stats.entries).toBe(0);
      const body = responses.json("github", 5);
      expect(body).toBe(reference(catalog, index, "github", 5));
      expect(JSON.parse(body).matches.map((m: { slug: string }) => m.slug)).not.toContain("github");
    },
    SLOW,
  );
});

describe("bounds", () => {
  test(
    "at most maxEntries bodies, least recently used dropped first",
    () => {
      const { responses } = unchanged({ maxEntries: 3 });
      for (const q of ["github", "stripe", "figma"]) responses.json(q, 5);
      responses.json("github", 5); // used again: now the most recent
      responses.json("slack", 5);
      expect(responses.stats.entries).toBe(3);
      const chars = responses.stats.chars;
      responses.json("github", 5); // still held: no growth
      expect(responses.stats.chars).toBe(chars);
      responses.json("stripe", 5); // dropped earlier: stored again
      expect(responses.stats.entries).toBe(3);
    },
    SLOW,
  );

  test(
    "at most maxChars characters of bodies",
    () => {
      const { responses } = unchanged({ maxChars: 20_000 });
      for (const q of ["github", "stripe", "figma", "slack", "google", "micro", "amazon"])
        responses.json(q, 20);
      expect(responses.stats.chars).toBeLessThanOrEqual(20_000);
      expect(responses.stats.entries).toBeGreaterThan(0);
      expect(responses.stats.entries).toBeLessThan(7);
    },
    SLOW,
  );
});

describe("GET /v1/search through the app", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  test(
    "a repeated (cached) query is still metered, with exact rate-limit headers",
    async () => {
      const free = await t.key("free");
      const bodies: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const r = await t.get("/v1/search?q=github&limit=5", free);
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
        expect(r.headers.get("x-ratelimit-limit")).toBe("30");
        expect(r.headers.get("x-ratelimit-remaining")).toBe(String(30 - i));
        bodies.push(await r.text());
      }
      expect(new Set(bodies).size).toBe(1);
      const usage = (await (await t.get("/v1/usage", free)).json()) as {
        endpoints: Record<string, { used: number }>;
      };
      expect(usage.endpoints.search?.used).toBe(3);
    },
    SLOW,
  );

  test(
    "an entry updated in the running app shows in the next search answer",
    async () => {
      const key = await t.key("pro");
      const first = await (await t.get("/v1/search?q=figma&limit=1", key)).json();
      expect(first.matches[0].slug).toBe("figma");
      const figma = t.deps.catalog.brand("figma") as Brand;
      t.deps.catalog.update({ ...figma, brandColor: "0a0b0c" });
      const next = await (await t.get("/v1/search?q=figma&limit=1", key)).json();
      expect(next.matches[0].brandColor).toBe("0a0b0c");
      expect(next.matches[0]).toEqual(JSON.parse(t.deps.catalog.viewJson("figma") as string));
    },
    SLOW,
  );
});
