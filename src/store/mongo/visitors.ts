import { randomBytes } from "node:crypto";
import type { Db } from "mongodb";
import type { VisitorCountStore } from "../../public/port";

type Doc = { _id: "total"; count: number } | { _id: "secret"; value: string };

/** MongoDB visitor counter: documents `total` ($inc) and `secret` in `visitor_counter`. */
export class MongoVisitorStore implements VisitorCountStore {
  constructor(private db: Db) {}

  private get docs() {
    return this.db.collection<Doc>("visitor_counter");
  }

  async total() {
    const d = await this.docs.findOne({ _id: "total" });
    return d && "count" in d ? d.count : 0;
  }

  async increment() {
    const d = await this.docs.findOneAndUpdate(
      { _id: "total" },
      { $inc: { count: 1 } },
      { upsert: true, returnDocument: "after" },
    );
    return d && "count" in d ? d.count : 1;
  }

  async secret() {
    // the first instance's secret wins; every other one reads it
    const d = await this.docs.findOneAndUpdate(
      { _id: "secret" },
      { $setOnInsert: { value: randomBytes(32).toString("hex") } },
      { upsert: true, returnDocument: "after" },
    );
    if (!d || !("value" in d)) throw new Error("visitor counter secret not stored");
    return d.value;
  }
}
