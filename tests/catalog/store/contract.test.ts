import { expect, test } from "bun:test";
import { join } from "node:path";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { MongoCatalogSource } from "../../../src/catalog/store/mongo";
import type { CatalogSource } from "../../../src/catalog/store/port";
import { CATALOG_FILE } from "../../support/app";
import { smallCatalogFile } from "../../support/catalog";
import { portContract } from "../../support/port-contract";

/**
 * The catalog source's contract on both adapters: the built file, and MongoDB's catalog (seeded
 * from the small real catalog: all 20,000 brands take ~16 s on FerretDB) served from the
 * instance's local copy of its version.
 */
portContract<CatalogSource>(
  "catalog",
  {
    embedded: () => new FileCatalogSource(CATALOG_FILE),
    mongo: async (db, dataDir) => {
      await MongoCatalogSource.ensureIndexes(db);
      const source = new MongoCatalogSource(db, join(dataDir, "catalog-cache"));
      await source.seed(await new FileCatalogSource(smallCatalogFile()).load());
      return source;
    },
  },
  (get) => {
    test("serves the built catalog with its version", async () => {
      const source = await get();
      const catalog = new CatalogService(source);
      await catalog.load();
      expect(catalog.size).toBeGreaterThan(100);
      expect(await source.version()).toBe(catalog.version as string);
      expect(catalog.brand("github")?.variants.mono?.svg).toContain("<svg");
      catalog.close();
    }, 60_000);
  },
);
