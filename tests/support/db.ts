import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { tempDir } from "./temp";

/** The embedded database file and its WAL under `dataDir`, as one string of their bytes. */
export function databaseBytes(dataDir: string): string {
  return [DB_FILE, `${DB_FILE}-wal`]
    .filter((f) => existsSync(join(dataDir, f)))
    .map((f) => readFileSync(join(dataDir, f), "latin1"))
    .join("");
}

/** The embedded database under `dataDir` (its own connection, as another process would have). */
export const openDatabase = (dataDir: string) => new Database(join(dataDir, DB_FILE));

const connected: Database[] = [];

/**
 * `n` connections on one DATA_DIR (a new one unless given), as the service and the admin CLI
 * are two processes on one database; `closeConnections` (in an afterEach) closes them.
 */
export function connections(n: number, dataDir = tempDir()): Database[] {
  const dbs = Array.from({ length: n }, () => openDatabase(dataDir));
  connected.push(...dbs);
  return dbs;
}

export function closeConnections(): void {
  for (const db of connected.splice(0)) db.close();
}
