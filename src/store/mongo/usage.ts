import { type AnyBulkWriteOperation, type Db, MongoBulkWriteError } from "mongodb";
import { log } from "../../platform/log";
import { countInto } from "../../usage/daily";
import type { DailyCounts, DailyRow, UsageEvent, UsageEventStore } from "../../usage/port";

type EventDoc = UsageEvent & { _id: string };

const DUPLICATE_KEY = 11000;

/**
 * MongoDB usage store.
 *  - `usage_events`: the append-only log. `_id` is the event id (UUIDv7), so the id is unique
 *    and a replayed event is a duplicate-key error that is ignored. Index `day_id` serves the
 *    per-day reads (counter rebuild).
 *  - `usage_daily`: the projection, one document per account, day and bucket (unique index
 *    `account_day_bucket`, which also serves the analytics range reads), updated with `$inc`
 *    for the events an append actually inserted.
 */
export class MongoUsageStore implements UsageEventStore {
  constructor(private db: Db) {}

  private get events() {
    return this.db.collection<EventDoc>("usage_events");
  }
  private get dailyCol() {
    return this.db.collection<DailyRow>("usage_daily");
  }

  static async ensureIndexes(db: Db) {
    await db
      .collection("usage_events")
      .createIndexes([{ key: { day: 1, _id: 1 }, name: "day_id" }]);
    await db
      .collection("usage_daily")
      .createIndexes([
        { key: { accountId: 1, day: 1, bucket: 1 }, unique: true, name: "account_day_bucket" },
      ]);
  }

  async append(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    let inserted: UsageEvent[] = events;
    let failure: unknown = null;
    try {
      await this.events.insertMany(
        events.map((e) => ({ _id: e.id, ...e })),
        { ordered: false },
      );
    } catch (err) {
      // anything but a bulk write error: nothing is known to be written, the caller retries
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const writeErrors = err.writeErrors
        ? Array.isArray(err.writeErrors)
          ? err.writeErrors
          : [err.writeErrors]
        : [];
      const failed = new Set(writeErrors.map((w) => w.index));
      inserted = events.filter((_, i) => !failed.has(i));
      // duplicates (already stored) are success; any other failure is retried by the caller,
      // and the retry sees the events inserted now as duplicates
      if (writeErrors.some((w) => w.code !== DUPLICATE_KEY) || err.err) failure = err;
    }
    await this.project(inserted);
    if (failure) throw failure;
    return inserted.length;
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    return this.dailyCol
      .find({ accountId, day: { $gte: from, $lte: to } }, { projection: { _id: 0 } })
      .sort({ day: 1, bucket: 1 })
      .toArray();
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    const cursor = this.events
      .find({ day }, { projection: { _id: 0 } })
      .sort({ day: 1, _id: 1 })
      .batchSize(5000);
    for await (const doc of cursor) yield doc as UsageEvent;
  }

  /** Recompute usage_daily from usage_events ($out replaces the collection and keeps its indexes). */
  async prune(beforeDay: string) {
    // usage_daily rows are maintained per batch, so they already hold these days: only the raw
    // events go
    const days = await this.events.distinct("day", { day: { $lt: beforeDay } });
    const r = await this.events.deleteMany({ day: { $lt: beforeDay } });
    return { days: days.length, events: r.deletedCount };
  }

  async rebuildDaily() {
    // only the days still in the log are recomputed: rows of pruned days stay as they are
    const oldest = await this.events
      .find({}, { projection: { day: 1 } })
      .sort({ day: 1 })
      .limit(1)
      .next();
    if (oldest) await this.dailyCol.deleteMany({ day: { $gte: oldest.day } });
    await this.events
      .aggregate(
        [
          {
            $group: {
              _id: { accountId: "$accountId", day: "$day", bucket: "$bucket" },
              requests: { $sum: { $ifNull: ["$count", 1] } },
              errors: {
                $sum: {
                  $cond: [
                    { $and: [{ $gte: ["$status", 400] }, { $ne: ["$status", 429] }] },
                    { $ifNull: ["$count", 1] },
                    0,
                  ],
                },
              },
              rateLimited: {
                $sum: { $cond: [{ $eq: ["$status", 429] }, { $ifNull: ["$count", 1] }, 0] },
              },
            },
          },
          {
            $project: {
              _id: 0,
              accountId: "$_id.accountId",
              day: "$_id.day",
              bucket: "$_id.bucket",
              requests: 1,
              errors: 1,
              rateLimited: 1,
            },
          },
          {
            $merge: {
              into: "usage_daily",
              on: ["accountId", "day", "bucket"],
              whenMatched: "replace",
              whenNotMatched: "insert",
            },
          },
        ],
        { allowDiskUse: true },
      )
      .toArray();
    await MongoUsageStore.ensureIndexes(this.db);
    return {
      events: await this.events.countDocuments(),
      rows: await this.dailyCol.countDocuments(),
    };
  }

  async close() {}

  /**
   * Fold newly inserted events into usage_daily. The events are already safe in the log, so a
   * failure here is logged, not thrown (a retry would skip them as duplicates anyway); the
   * projection is then repaired with `npm run admin -- projections rebuild`.
   */
  private async project(events: UsageEvent[]) {
    if (events.length === 0) return;
    const sums = new Map<string, { row: Omit<DailyRow, keyof DailyCounts>; c: DailyCounts }>();
    for (const e of events) {
      const k = `${e.accountId}\u0000${e.day}\u0000${e.bucket}`;
      let s = sums.get(k);
      if (!s) {
        s = {
          row: { accountId: e.accountId, day: e.day, bucket: e.bucket },
          c: { requests: 0, errors: 0, rateLimited: 0 },
        };
        sums.set(k, s);
      }
      countInto(s.c, e.status, e.count ?? 1);
    }
    const ops: AnyBulkWriteOperation<DailyRow>[] = [...sums.values()].map(({ row, c }) => ({
      updateOne: {
        filter: row,
        update: { $inc: { requests: c.requests, errors: c.errors, rateLimited: c.rateLimited } },
        upsert: true,
      },
    }));
    try {
      await this.dailyCol.bulkWrite(ops, { ordered: false });
    } catch (err) {
      log(
        "error",
        "usage_daily projection update failed; run: npm run admin -- projections rebuild",
        {
          events: events.length,
          error: (err as Error).message,
        },
      );
    }
  }
}
