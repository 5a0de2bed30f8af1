import { expect, test } from "bun:test";
import { EmbeddedEnrichmentStore } from "../../../../src/catalog/enrichment/store/embedded";
import { MongoEnrichmentStore } from "../../../../src/catalog/enrichment/store/mongo";
import type {
  EnrichmentRecord,
  EnrichmentStore,
} from "../../../../src/catalog/enrichment/store/port";
import { portContract } from "../../../support/port-contract";

/**
 * The enrichment store's contract on both adapters: the latest record per brand, and of two
 * jobs on the same inputs the first record stays (instances converge on one result).
 */
portContract<EnrichmentStore>(
  "enrichment",
  {
    embedded: (db) => new EmbeddedEnrichmentStore(db),
    mongo: async (db) => new MongoEnrichmentStore(db),
  },
  (get) => {
    const record = (brandId: number, basis: string, hex: string): EnrichmentRecord => ({
      brandId,
      slug: `brand-${brandId}`,
      basis,
      at: new Date().toISOString(),
      verifiedAt: null,
      darkModeColor: hex,
      contrastTextColor: null,
      colors: [{ role: "brand", hex: hex.slice(1), source: "derived" }],
      variants: {},
    });

    test("the first record of the same inputs stays; other inputs replace it", async () => {
      const store = await get();
      const first = record(7001, "basis-a", "#111111");
      expect(await store.save(first)).toEqual(first);
      // another job (or instance) on the same inputs: the stored record is kept and returned
      expect(await store.save(record(7001, "basis-a", "#222222"))).toEqual(first);
      // the brand's inputs changed: the new record replaces it
      const changed = record(7001, "basis-b", "#333333");
      expect(await store.save(changed)).toEqual(changed);
      expect((await store.all()).filter((r) => r.brandId === 7001)).toEqual([changed]);
    });

    test("all: the latest record of every brand", async () => {
      const store = await get();
      const a = record(7101, "x", "#444444");
      const b = record(7102, "y", "#555555");
      await store.save(a);
      await store.save(b);
      const mine = (await store.all()).filter((r) => r.brandId === 7101 || r.brandId === 7102);
      expect(mine.sort((x, y) => x.brandId - y.brandId)).toEqual([a, b]);
    });
  },
);
