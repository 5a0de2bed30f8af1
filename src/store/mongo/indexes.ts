import type { Db, IndexDescription } from "mongodb";

/**
 * Create the indexes of a collection that do not exist yet (by name). Re-sending existing
 * indexes is a no-op on MongoDB but breaks the connection on FerretDB v1 for some compound
 * keys, so only missing ones are sent.
 */
export async function ensureIndexes(
  db: Db,
  collection: string,
  specs: (IndexDescription & { name: string })[],
): Promise<void> {
  const col = db.collection(collection);
  const have = new Set(
    (await col.indexes().catch(() => [] as { name?: string }[])).map((i) => i.name),
  );
  const missing = specs.filter((s) => !have.has(s.name));
  if (missing.length) await col.createIndexes(missing);
}
