import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Database, DB_FILE } from "../../src/store/embedded/db";

/** The embedded database file and its WAL under `dataDir`, as one string of their bytes. */
export function databaseBytes(dataDir: string): string {
  return [DB_FILE, `${DB_FILE}-wal`]
    .filter((f) => existsSync(join(dataDir, f)))
    .map((f) => readFileSync(join(dataDir, f), "latin1"))
    .join("");
}

/** The embedded database under `dataDir` (its own connection, as another process would have). */
export const openDatabase = (dataDir: string) => new Database(join(dataDir, DB_FILE));
