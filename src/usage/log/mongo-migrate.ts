import type { Db } from "mongodb";
import type { MongoUsageLog } from "./mongo";

/** Move the per-event layout's collections into the log (none yet). */
export async function migrateMongo(_db: Db, _log: MongoUsageLog): Promise<void> {}
