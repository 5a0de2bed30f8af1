import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { isDeepStrictEqual } from "node:util";
import {
  type Collection,
  type Db,
  type Filter,
  MongoBulkWriteError,
  type OptionalUnlessRequiredId,
} from "mongodb";
import { DUPLICATE_KEY } from "../../store/mongo/errors";
import { ensureIndexes } from "../../store/mongo/indexes";
import type { Brand, BuiltCatalog, StoredSvg, Variant } from "../built-catalog";
import { readCatalogMeta } from "./catalog-db";
import type { CatalogSource } from "./port";
import { writeCatalogFile } from "./schema";

/** A brand without its artwork; `_id` is the brand id as a string. */
type BrandDoc = Omit<Brand, "variants"> & { _id: string };
/** One SVG of a brand; `_id` is "brandId:variant". */
interface AssetDoc extends StoredSvg {
  _id: string;
  brandId: number;
  variant: Variant;
}

/**
 * MongoDB catalog: `brands` (metadata) and `assets` (one SVG per brand and variant, with its
 * sha256). A `catalog_meta` document holds the loaded version so instances know when to reload.
 * Each instance serves the catalog from a local database file of that version (file()), the
 * same way the embedded store serves the built file.
 */
export class MongoCatalogSource implements CatalogSource {
  constructor(
    private db: Db,
    /** where this instance keeps its local catalog database (DATA_DIR/catalog-cache) */
    private cacheDir: string,
  ) {}

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "brands", [
      { key: { id: 1 }, unique: true, name: "id_unique" },
      { key: { slug: 1 }, unique: true, name: "slug_unique" },
      { key: { domains: 1 }, name: "domains" },
    ]);
    await ensureIndexes(db, "assets", [
      { key: { brandId: 1, variant: 1 }, unique: true, name: "brand_variant" },
    ]);
  }

  async version(): Promise<string | null> {
    const meta = await this.db
      .collection<{ _id: string; version: string }>("catalog_meta")
      .findOne({ _id: "catalog" });
    return meta?.version ?? null;
  }

  /**
   * The stored catalog version as a local catalog database file
   * (`<cacheDir>/catalog-<version>.sqlite`), written from MongoDB when this instance has none
   * for that version: brands streamed in id order, their assets fetched a batch of brands at a
   * time, so memory stays bounded by the batch. Files of other versions are removed after.
   */
  async file(): Promise<string> {
    const meta = await this.db
      .collection<{ _id: string; version: string; builtAt: string }>("catalog_meta")
      .findOne({ _id: "catalog" });
    if (!meta) throw new Error("MongoDB holds no catalog yet: it is seeded at start-up");
    const name = `catalog-${meta.version.replace(/[^A-Za-z0-9_-]/g, "_")}.sqlite`;
    const file = join(this.cacheDir, name);
    try {
      if (readCatalogMeta(file).version === meta.version) return file;
    } catch {
      // not materialized yet (or damaged): written below
    }
    mkdirSync(this.cacheDir, { recursive: true });
    await writeCatalogFile(file, meta, this.brands(), (f) => new DatabaseSync(f));
    for (const other of readdirSync(this.cacheDir))
      if (/^catalog-.*\.sqlite$/.test(other) && other !== name)
        rmSync(join(this.cacheDir, other), { force: true });
    return file;
  }

  /** Every brand with its artwork, in id order, a batch at a time. */
  private async *brands(): AsyncGenerator<Brand> {
    const cursor = this.db
      .collection<BrandDoc>("brands")
      .find({}, { projection: { _id: 0 } })
      .sort({ id: 1 });
    let batch: Brand[] = [];
    const flush = async () => {
      const byId = new Map(batch.map((b) => [b.id, b]));
      const assets = this.db
        .collection<AssetDoc>("assets")
        .find({ brandId: { $in: [...byId.keys()] } }, { projection: { _id: 0 } });
      for await (const a of assets) {
        const brand = byId.get(a.brandId);
        if (brand) brand.variants[a.variant] = { svg: a.svg, sha256: a.sha256, source: a.source };
      }
      const out = batch;
      batch = [];
      return out;
    };
    for await (const doc of cursor) {
      batch.push({ ...(doc as unknown as Brand), variants: {} });
      if (batch.length >= 500) yield* await flush();
    }
    if (batch.length) yield* await flush();
  }

  /**
   * Write a built catalog into MongoDB when its version differs from the stored one. Only
   * what changed is written: new documents are inserted in batches, changed ones replaced by
   * `_id`, and brands or assets no longer in the build deleted; the version goes last, so other
   * instances reload only once everything is in place. Documents are keyed by string `_id`
   * (brand id, "brandId:variant"), the one lookup FerretDB's SQLite backend pushes down.
   */
  async seed(built: BuiltCatalog): Promise<boolean> {
    if ((await this.version()) === built.version) return false;
    const brandDocs: BrandDoc[] = built.brands.map(({ variants: _v, ...doc }) => ({
      _id: String(doc.id),
      ...doc,
    }));
    const assetDocs: AssetDoc[] = built.brands.flatMap((b) =>
      Object.entries(b.variants).map(([variant, svg]) => ({
        _id: `${b.id}:${variant}`,
        brandId: b.id,
        variant: variant as Variant,
        ...(svg as StoredSvg),
      })),
    );
    await syncCollection(this.db.collection<BrandDoc>("brands"), brandDocs, (a, b) =>
      isDeepStrictEqual(a, b),
    );
    // an asset is the same when its sha256 and source are
    await syncCollection(
      this.db.collection<AssetDoc>("assets"),
      assetDocs,
      (a, b) => a.sha256 === b.sha256 && a.source === b.source,
      { _id: 1, sha256: 1, source: 1 },
    );
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

const CHUNK = 500;
/**
 * Replacements per bulk write. FerretDB v1 on PostgreSQL stops answering every client once one
 * bulk write updates about 48 or more existing documents; on any server the catalog sends at
 * most this many (a catalog changes a few documents per build).
 */
const UPDATES_PER_BULK = 32;

/**
 * Make a collection hold exactly `docs` (by _id), writing only the differences, at most
 * UPDATES_PER_BULK replacements per bulk write.
 */
async function syncCollection<T extends { _id: string }>(
  col: Collection<T>,
  docs: T[],
  same: (stored: T, wanted: T) => boolean,
  projection?: Record<string, 1>,
) {
  const stored = new Map<string, T>();
  for await (const d of col.find({}, projection ? { projection } : {})) stored.set(d._id, d as T);
  const fresh = docs.filter((d) => !stored.has(d._id));
  const changed = docs.filter((d) => {
    const s = stored.get(d._id);
    return s !== undefined && !same(s, d);
  });
  const wanted = new Set(docs.map((d) => d._id));
  const gone = [...stored.keys()].filter((id) => !wanted.has(id));
  for (let i = 0; i < gone.length; i += CHUNK)
    await col.deleteMany({ _id: { $in: gone.slice(i, i + CHUNK) } } as Filter<T>);
  for (let i = 0; i < fresh.length; i += CHUNK) {
    try {
      await col.insertMany(fresh.slice(i, i + CHUNK) as OptionalUnlessRequiredId<T>[], {
        ordered: false,
      });
    } catch (err) {
      // another instance seeding the same version inserted some first: those are in place
      const codes = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
      if (codes.length === 0 || codes.some((w) => w.code !== DUPLICATE_KEY)) throw err;
    }
  }
  for (let i = 0; i < changed.length; i += UPDATES_PER_BULK)
    await col.bulkWrite(
      changed.slice(i, i + UPDATES_PER_BULK).map((d) => ({
        replaceOne: { filter: { _id: d._id } as Filter<T>, replacement: d, upsert: true },
      })),
      { ordered: false },
    );
}
