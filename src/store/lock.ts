import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/** Another service process uses this DATA_DIR. */
export class DataDirLocked extends Error {}

/**
 * One service process per DATA_DIR: the usage writer's spill files and the embedded store's
 * write thread assume they are alone there. The lock is SQLite's own exclusive file lock on
 * `DATA_DIR/service.lock` (a POSIX lock, held by the connection until it closes, released by the
 * system when the process dies, kill -9 included: no stale lock to clean up). A second process
 * fails to take it at once and is refused with the first one's pid (from `service.pid`).
 * Admin commands (`npm run admin`) do not take it: they may run beside the service.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, "service.lock");
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("PRAGMA journal_mode = DELETE");
    // the first write takes the exclusive lock; locking_mode keeps it until the connection closes
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER)");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("DELETE FROM holder");
    db.exec(`INSERT INTO holder VALUES (${process.pid})`);
    db.exec("COMMIT");
  } catch (err) {
    db.close();
    let pid = "";
    try {
      pid = readFileSync(join(dataDir, "service.pid"), "utf8").trim();
    } catch {}
    throw new DataDirLocked(
      `DATA_DIR ${dataDir} is in use by another service process${pid ? ` (pid ${pid})` : ""}: run one service per DATA_DIR (${(err as Error).message})`,
    );
  }
  writeFileSync(join(dataDir, "service.pid"), `${process.pid}\n`);
  return {
    release: () => {
      if (db.isOpen) db.close();
    },
  };
}
