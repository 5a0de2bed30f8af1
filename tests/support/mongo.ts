/**
 * The MongoDB-wire server of a `bun test` run, for every test file that needs one:
 *
 *   const mongo = await mongoUrl();        // { url } or { url: null, reason }
 *   describeIf(!!mongo.url, mongo.reason ?? "")(`... ${skipNote(mongo)}`, ...)   // tests/support/skip.ts
 *
 * MONGODB_URL, when set, is used as is (a real MongoDB 6+); so is TEST_MONGODB_URL, the FerretDB
 * that `npm test` starts for the whole run (scripts/test.ts). Otherwise ONE FerretDB
 * (scripts/mongo-local.ts: on a throwaway PostgreSQL cluster, or SQLite with FERRETDB_BACKEND=sqlite
 * or without PostgreSQL) is started on first use in this process and stopped by tests/setup.ts
 * after the last test file. Without a FerretDB binary the answer carries the one-line reason to skip.
 * Each caller should use its own database (`testDbName`), dropped when it is done.
 */
import type { Db } from "mongodb";
import { findFerretDb, type MongoLocal, startMongoLocal } from "../../scripts/mongo-local";

export type MongoAvailability = { url: string; reason?: undefined } | { url: null; reason: string };

let started: Promise<MongoAvailability> | null = null;
let local: MongoLocal | null = null;
let warned = false;

export function mongoUrl(): Promise<MongoAvailability> {
  started ??= (async (): Promise<MongoAvailability> => {
    const given = process.env.MONGODB_URL ?? process.env.TEST_MONGODB_URL;
    if (given) return { url: given };
    const found = findFerretDb();
    if (!found.bin) return { url: null, reason: (found as { reason: string }).reason };
    try {
      local = await startMongoLocal({ bin: found.bin });
      return { url: local.url };
    } catch (err) {
      return { url: null, reason: (err as Error).message.split("\n")[0] as string };
    }
  })();
  return started.then((m) => {
    if (!m.url && !warned) {
      warned = true;
      console.warn(`MongoDB tests skipped: ${m.reason}`);
    }
    return m;
  });
}

/** A suffix for a describe title: empty when MongoDB is there, else "(skipped: <reason>)". */
export function skipNote(m: MongoAvailability): string {
  return m.url ? "" : `(skipped: ${m.reason})`;
}

let n = 0;
/** A database name of its own for one test file or suite. */
export function testDbName(prefix = "bapi_test"): string {
  return `${prefix}_${process.pid}_${Date.now()}_${n++}`;
}

/** Stops the FerretDB this run started (tests/setup.ts, after the last file). */
export async function stopMongo(): Promise<void> {
  const l = local;
  local = null;
  started = null;
  await l?.stop();
}

/** An account's events in the MongoDB usage log: its batch documents' counts summed. */
export async function eventsInLog(db: Db, accountId: string): Promise<number> {
  const [row] = await db
    .collection("usage_log")
    .aggregate<{ n: number }>([
      { $match: { a: accountId } },
      { $group: { _id: null, n: { $sum: "$n" } } },
    ])
    .toArray();
  return row?.n ?? 0;
}

/**
 * Batches the MongoDB usage log holds and has not counted yet (of one account, or all), and a
 * projector's group left under way (with a batch of that account). A pending document whose
 * batch never reached the log (its process died between the two inserts: the request was never
 * answered) is not one; the log drops it later.
 */
export async function uncountedBatches(db: Db, accountId?: string): Promise<number> {
  const idsOf = async (name: string, filter: object) =>
    (
      await db
        .collection<{ _id: string }>(name)
        .find(filter, { projection: { _id: 1 } })
        .toArray()
    ).map((d) => d._id);
  // batch ids are `account|t0|q`: an account's are the ids from "account|" up to "account}"
  const mine = accountId ? { _id: { $gte: `${accountId}|`, $lt: `${accountId}}` } } : {};
  const pending = await idsOf("usage_pending", mine);
  const inSet = { _id: { $in: pending } };
  const stored = pending.length === 0 ? [] : await idsOf("usage_log", inSet);
  const counted = new Set(pending.length === 0 ? [] : await idsOf("usage_counted", inSet));
  const group = await db
    .collection<{ _id: string; ids?: string[] }>("usage_projector")
    .findOne({ _id: "group" });
  const groupOpen =
    group && (!accountId || group.ids?.some((id) => id.startsWith(`${accountId}|`))) ? 1 : 0;
  return stored.filter((id) => !counted.has(id)).length + groupOpen;
}
