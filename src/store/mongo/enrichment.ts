import type { Db, Filter } from "mongodb";
import type {
  DiscoveryRecord,
  DiscoveryStore,
  EnrichmentRecord,
  EnrichmentStore,
} from "../../catalog/enrichment-port";
import type { StoredSvg, Variant } from "../../catalog/types";
import { isDuplicate } from "./errors";

type RecordDoc = EnrichmentRecord & { _id: number };
type DiscoveryDoc = DiscoveryRecord & { _id: string };

const withoutId = <T extends { _id: unknown }>({ _id, ...rest }: T) => rest;

/**
 * MongoDB enrichment store: the record per brand in `enrichments` (replayed at start), and the
 * result written where the catalog lives: color fields and verifiedAt on the `brands` document,
 * derived variants as `assets` documents (one per brand and variant, as the catalog seed writes).
 * Discovery records: one `discoveries` document per registrable domain (_id), replayed over the
 * catalog by every instance (at start, and polled by `at`).
 */
export class MongoEnrichmentStore implements EnrichmentStore, DiscoveryStore {
  constructor(private db: Db) {}

  private get records() {
    return this.db.collection<RecordDoc>("enrichments");
  }

  async all(): Promise<EnrichmentRecord[]> {
    const docs = await this.records.find({}).toArray();
    return docs.map(({ _id, ...r }) => r);
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
    if (res) {
      const { _id, ...kept } = res;
      return kept;
    }
    // string _ids, as the catalog seed writes them (store/mongo/catalog.ts)
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

  private get found() {
    return this.db.collection<DiscoveryDoc>("discoveries");
  }

  static async ensureIndexes(db: Db) {
    await db.collection("discoveries").createIndex({ at: 1 });
    await db.collection("discoveries").createIndex({ status: 1, refreshAt: 1 });
  }

  async discoveries(since?: string): Promise<DiscoveryRecord[]> {
    const docs = await this.found.find(since === undefined ? {} : { at: { $gt: since } }).toArray();
    return docs.map(withoutId);
  }

  async discovery(domain: string): Promise<DiscoveryRecord | null> {
    const doc = await this.found.findOne({ _id: domain });
    return doc ? withoutId(doc) : null;
  }

  async discoveriesDue(before: string, staleBefore: string, limit: number) {
    const find = (filter: Filter<DiscoveryDoc>, order: "refreshAt" | "at") =>
      this.found
        .find(filter)
        .sort({ [order]: 1 })
        .limit(limit)
        .toArray();
    // two indexed queries (status, refreshAt) and (at), merged soonest first
    const [due, stale] = await Promise.all([
      find({ status: "found", refreshAt: { $lte: before } }, "refreshAt"),
      find({ status: "found", refreshAt: { $exists: false }, at: { $lte: staleBefore } }, "at"),
    ]);
    return [...due, ...stale]
      .sort((a, b) => ((a.refreshAt ?? a.at) < (b.refreshAt ?? b.at) ? -1 : 1))
      .slice(0, limit)
      .map(withoutId);
  }

  async saveDiscovery(record: DiscoveryRecord): Promise<DiscoveryRecord> {
    // never over a taken-down record: the filter does not match it, and the upsert's insert
    // then fails on the existing _id. The whole record is replaced: a field the new record
    // lacks (bimi, previous, pinned ...) must not survive from the old one.
    try {
      await this.found.replaceOne(
        { _id: record.domain, status: { $ne: "taken_down" } },
        record as DiscoveryDoc,
        { upsert: true },
      );
      return record;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      return (await this.discovery(record.domain)) ?? record;
    }
  }
}
