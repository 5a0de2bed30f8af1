import type { Db } from "mongodb";
import type { CatalogSource } from "../../catalog/port";
import type { Brand, BuiltCatalog, StoredSvg, Variant } from "../../catalog/types";

type BrandDoc = Omit<Brand, "variants">;
interface AssetDoc extends StoredSvg {
  brandId: number;
  variant: Variant;
}

/**
 * MongoDB catalog: `brands` (metadata) and `assets` (one SVG per brand and variant, with its
 * sha256). A `catalog_meta` document holds the loaded version so instances know when to reload.
 */
export class MongoCatalogSource implements CatalogSource {
  constructor(private db: Db) {}

  static async ensureIndexes(db: Db) {
    await db.collection("brands").createIndexes([
      { key: { id: 1 }, unique: true, name: "id_unique" },
      { key: { slug: 1 }, unique: true, name: "slug_unique" },
      { key: { domains: 1 }, name: "domains" },
    ]);
    await db
      .collection("assets")
      .createIndexes([{ key: { brandId: 1, variant: 1 }, unique: true, name: "brand_variant" }]);
  }

  async version(): Promise<string | null> {
    const meta = await this.db
      .collection<{ _id: string; version: string }>("catalog_meta")
      .findOne({ _id: "catalog" });
    return meta?.version ?? null;
  }

  async load(): Promise<BuiltCatalog> {
    const meta = await this.db
      .collection<{ _id: string; version: string; builtAt: string }>("catalog_meta")
      .findOne({ _id: "catalog" });
    if (!meta) throw new Error("MongoDB holds no catalog yet: it is seeded at start-up");
    const brands = await this.db
      .collection<BrandDoc>("brands")
      .find({}, { projection: { _id: 0 } })
      .sort({ id: 1 })
      .toArray();
    const byId = new Map<number, Brand>(brands.map((b) => [b.id, { ...b, variants: {} }]));
    for await (const a of this.db
      .collection<AssetDoc>("assets")
      .find({}, { projection: { _id: 0 } })) {
      const brand = byId.get(a.brandId);
      if (brand) brand.variants[a.variant] = { svg: a.svg, sha256: a.sha256, source: a.source };
    }
    return { version: meta.version, builtAt: meta.builtAt, brands: [...byId.values()] };
  }

  /** Write a built catalog into MongoDB when its version differs from the stored one. */
  async seed(built: BuiltCatalog): Promise<boolean> {
    if ((await this.version()) === built.version) return false;
    const brands = this.db.collection<BrandDoc>("brands");
    const assets = this.db.collection<AssetDoc>("assets");
    const CHUNK = 500;
    for (let i = 0; i < built.brands.length; i += CHUNK) {
      const slice = built.brands.slice(i, i + CHUNK);
      await brands.bulkWrite(
        slice.map(({ variants: _v, ...doc }) => ({
          replaceOne: { filter: { id: doc.id }, replacement: doc, upsert: true },
        })),
        { ordered: false },
      );
      const assetOps = slice.flatMap((b) =>
        Object.entries(b.variants).map(([variant, svg]) => ({
          replaceOne: {
            filter: { brandId: b.id, variant: variant as Variant },
            replacement: { brandId: b.id, variant: variant as Variant, ...(svg as StoredSvg) },
            upsert: true,
          },
        })),
      );
      if (assetOps.length) await assets.bulkWrite(assetOps, { ordered: false });
    }
    await this.db
      .collection<{ _id: string; version: string; builtAt: string }>("catalog_meta")
      .updateOne(
        { _id: "catalog" },
        { $set: { version: built.version, builtAt: built.builtAt } },
        { upsert: true },
      );
    return true;
  }
}
