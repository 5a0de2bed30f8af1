import type { Db } from "mongodb";
import { isDuplicate } from "../../../store/mongo/errors";
import type { StoredSvg, Variant } from "../../built-catalog";
import type { EnrichmentRecord, EnrichmentStore } from "./port";

type RecordDoc = EnrichmentRecord & { _id: number };

/**
 * A stored record as the port gives it: its nullable fields null when the document lacks them
 * (FerretDB 1.x leaves null fields of an upsert's $setOnInsert out; MongoDB keeps them).
 */
const fromDoc = ({ _id, ...r }: RecordDoc): EnrichmentRecord => ({
  ...r,
  verifiedAt: r.verifiedAt ?? null,
  darkModeColor: r.darkModeColor ?? null,
  contrastTextColor: r.contrastTextColor ?? null,
});

/**
 * MongoDB enrichment store: the record per brand in `enrichments` (replayed at start), and the
 * result written where the catalog lives: color fields and verifiedAt on the `brands` document,
 * derived variants as `assets` documents (one per brand and variant, as the catalog seed writes).
 */
export class MongoEnrichmentStore implements EnrichmentStore {
  constructor(private db: Db) {}

  private get records() {
    return this.db.collection<RecordDoc>("enrichments");
  }

  async all(): Promise<EnrichmentRecord[]> {
    const docs = await this.records.find({}).toArray();
    return docs.map(fromDoc);
  }

  async save(record: EnrichmentRecord): Promise<EnrichmentRecord> {
    // the first record for these inputs wins, so concurrent jobs on several instances converge
    const res = await this.records
      .findOneAndUpdate(
        { _id: record.brandId, basis: record.basis },
        { $setOnInsert: record },
        { upsert: true, returnDocument: "before" },
      )
      .catch(async (err: { code?: number }) => {
        // duplicate _id: a record with other inputs is stored; these inputs replace it
        if (!isDuplicate(err)) throw err;
        await this.records.replaceOne({ _id: record.brandId }, record);
        return null;
      });
    if (res) return fromDoc(res);
    // string _ids, as the catalog seed writes them (catalog/store/mongo.ts)
    await this.db.collection<{ _id: string }>("brands").updateOne(
      { _id: String(record.brandId) },
      {
        $set: {
          colors: record.colors,
          darkModeColor: record.darkModeColor,
          contrastTextColor: record.contrastTextColor,
          verifiedAt: record.verifiedAt,
        },
      },
    );
    const ops = Object.entries(record.variants).map(([variant, svg]) => ({
      replaceOne: {
        filter: { _id: `${record.brandId}:${variant}` },
        replacement: {
          brandId: record.brandId,
          variant: variant as Variant,
          ...(svg as StoredSvg),
        },
        upsert: true,
      },
    }));
    if (ops.length)
      await this.db.collection<{ _id: string }>("assets").bulkWrite(ops, { ordered: false });
    return record;
  }
}
