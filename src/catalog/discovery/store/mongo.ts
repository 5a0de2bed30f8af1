import type { Db, Filter } from "mongodb";
import { isDuplicate } from "../../../store/mongo/errors";
import type { DiscoveryRecord, DiscoveryStore } from "./port";

type DiscoveryDoc = DiscoveryRecord & { _id: string };

const withoutId = <T extends { _id: unknown }>({ _id, ...rest }: T) => rest;

/**
 * MongoDB discovery store: one `discoveries` document per registrable domain (_id), replayed
 * over the catalog by every instance (at start, and polled by `at`).
 */
export class MongoDiscoveryStore implements DiscoveryStore {
  constructor(private db: Db) {}

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
