import type { Db } from "mongodb";

/**
 * FerretDB v1, the MongoDB-wire server the tests run on, differs from MongoDB where it matters
 * to a writer; the adapters ask here and keep their MongoDB design for MongoDB.
 */

/** Whether the server is FerretDB (it names its version in buildInfo). */
export async function isFerretDb(db: Db): Promise<boolean> {
  const info = await db.command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === "string";
}

/**
 * Updates per bulkWrite call on FerretDB. FerretDB v1.24 on PostgreSQL stops answering every
 * client, for good, once one bulk write updates about 48 or more existing documents (replace or
 * update, ordered or not; inserts are not affected; its SQLite backend is not affected); 32 stays
 * clear of that. MongoDB takes the adapters' own, larger chunks.
 */
export const FERRET_UPDATES_PER_BULK = 32;
