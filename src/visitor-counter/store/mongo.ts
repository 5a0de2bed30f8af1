import { randomBytes } from "node:crypto";
import type { Db } from "mongodb";
import { newId } from "../../platform/ids";
import { retryInsertRace } from "../../store/mongo/errors";
import type { VisitorCountStore } from "./port";

type Doc = { _id: string; count?: number; value?: string };

/**
 * MongoDB visitor counter in `visitor_counter`: the total is the sum of `total…` documents,
 * one per process (`total:<id>`; the single `total` of earlier versions still counts), each
 * incremented only by its process, one increment at a time. No two writers ever update one
 * document, so no count is lost where conditional updates are not atomic (FerretDB v1 reads,
 * then writes). `secret` is the shared salt: the first instance's wins.
 */
export class MongoVisitorStore implements VisitorCountStore {
  private readonly shard = `total:${newId()}`;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private db: Db) {}

  private get docs() {
    return this.db.collection<Doc>("visitor_counter");
  }

  async total() {
    const [r] = await this.docs
      .aggregate<{ n: number }>([
        { $match: { _id: { $regex: "^total" } } },
        { $group: { _id: null, n: { $sum: "$count" } } },
      ])
      .toArray();
    return r?.n ?? 0;
  }

  async increment() {
    const done = this.queue.then(() =>
      this.docs.updateOne({ _id: this.shard }, { $inc: { count: 1 } }, { upsert: true }),
    );
    this.queue = done.catch(() => {});
    await done;
    return this.total();
  }

  async secret() {
    const d = await retryInsertRace(() =>
      this.docs.findOneAndUpdate(
        { _id: "secret" },
        { $setOnInsert: { value: randomBytes(32).toString("hex") } },
        { upsert: true, returnDocument: "after" },
      ),
    );
    if (!d?.value) throw new Error("visitor counter secret not stored");
    return d.value;
  }
}
