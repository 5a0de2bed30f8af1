import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";

/**
 * The embedded store's one SQLite database (`node:sqlite`, which Bun and Deno both ship): a file
 * under DATA_DIR in WAL mode that every embedded adapter shares, so writes that belong together
 * share a transaction and the whole store is one file.
 */

/** The database file's name under DATA_DIR. */
export const DB_FILE = "brand-api.sqlite";

export interface DatabaseOptions {
  /**
   * `normal` (WAL with synchronous=NORMAL: a commit survives a process crash; a power loss may
   * take the last commits) or `full` (every commit is on disk before it returns)
   */
  synchronous?: "normal" | "full";
  /** how long a writer waits for another process's write lock, in ms */
  busyTimeoutMs?: number;
}

/**
 * Why SQLite refused, in the error codes the rest of the service already reads (`isStorageFull`
 * in http/errors.ts): ENOSPC a full disk or quota, EROFS a read-only file, EBUSY a lock held
 * past the busy timeout, EIO a corrupt or unreadable file. null: not a storage condition (a
 * constraint or a bug).
 */
export function storageCode(err: unknown): "ENOSPC" | "EROFS" | "EBUSY" | "EIO" | null {
  const e = err as { code?: string; errcode?: number; message?: string } | null;
  if (!e) return null;
  if (e.code === "ENOSPC" || e.code === "EROFS" || e.code === "EBUSY" || e.code === "EIO")
    return e.code;
  // primary result codes (the low byte of an extended one)
  const primary = typeof e.errcode === "number" ? e.errcode & 0xff : -1;
  const msg = String(e.message ?? "");
  if (primary === 13 || /database or disk is full|disk I\/O error.*full/i.test(msg))
    return "ENOSPC";
  if (primary === 8 || /readonly database|read-only/i.test(msg)) return "EROFS";
  if (primary === 5 || primary === 6 || /database is locked|database table is locked/i.test(msg))
    return "EBUSY";
  if (
    primary === 10 ||
    primary === 11 ||
    primary === 26 ||
    /malformed|not a database|disk I\/O error/i.test(msg)
  )
    return "EIO";
  return null;
}

/** What an operator reads in the log for each storage condition. */
export const STORAGE_ADVICE: Record<NonNullable<ReturnType<typeof storageCode>>, string> = {
  ENOSPC: "the disk under DATA_DIR is full: free space; held usage events are written once it is",
  EROFS: "the database file or DATA_DIR is read-only: check the file's owner and mode",
  EBUSY:
    "another process holds the database's write lock: only one service may write one DATA_DIR at a time, or raise the lock wait",
  EIO: "the database file is corrupt or unreadable: stop the service, run `npm run admin -- db check`, restore DATA_DIR from a backup",
};

/** An error from SQLite re-thrown with a storage code (see storageCode) when it has one. */
export function storageError(err: unknown): unknown {
  const code = storageCode(err);
  if (!code || (err as { code?: string }).code === code) return err;
  const wrapped = new Error(`${(err as Error).message} (${STORAGE_ADVICE[code]})`, { cause: err });
  (wrapped as NodeJS.ErrnoException).code = code;
  return wrapped;
}

/** One SQLite database with a statement cache and transactions. */
export class Database {
  readonly db: DatabaseSync;
  private statements = new Map<string, StatementSync>();
  private depth = 0;
  private synchronous: "FULL" | "NORMAL" = "NORMAL";

  constructor(
    readonly path: string,
    opts: DatabaseOptions = {},
  ) {
    if (path !== ":memory:") {
      mkdirSync(dirname(path), { recursive: true });
      // it holds data keys and server secrets: the owner's only (SQLite gives its -wal and
      // -shm files the database file's mode)
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
    }
    try {
      this.db = new DatabaseSync(path);
      this.db.exec(`PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
      this.db.exec("PRAGMA journal_mode = WAL");
      this.synchronous = opts.synchronous === "full" ? "FULL" : "NORMAL";
      this.db.exec(`PRAGMA synchronous = ${this.synchronous}`);
      this.db.exec("PRAGMA foreign_keys = ON");
      // a deleted row is overwritten with zeros in its page, which the delete writes anyway
      // (crypto-shredding of data keys; FAST: freed overflow pages, which small rows never
      // have, are left as they are)
      this.db.exec("PRAGMA secure_delete = FAST");
      // readers never wait on the WAL growing without bound between checkpoints
      this.db.exec("PRAGMA wal_autocheckpoint = 1000");
    } catch (err) {
      throw storageError(err);
    }
  }

  /** A prepared statement, compiled once per SQL text. */
  stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      try {
        s = this.db.prepare(sql);
      } catch (err) {
        throw storageError(err);
      }
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Run statements that change the schema (CREATE ... IF NOT EXISTS), once at open. */
  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (err) {
      throw storageError(err);
    }
  }

  run(sql: string, ...params: SQLInputValue[]) {
    try {
      return this.stmt(sql).run(...params);
    } catch (err) {
      throw storageError(err);
    }
  }

  get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    try {
      return this.stmt(sql).get(...params) as T | undefined;
    } catch (err) {
      throw storageError(err);
    }
  }

  all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    try {
      return this.stmt(sql).all(...params) as T[];
    } catch (err) {
      throw storageError(err);
    }
  }

  /**
   * Run `fn` in one write transaction (BEGIN IMMEDIATE: the write lock is taken first, so two
   * processes never deadlock upgrading a read). All of it commits or none of it does; a nested
   * call joins the outer transaction (whose `durable` counts). `durable`: the commit is on disk
   * (the WAL fsync'd, synchronous=FULL for this one) before `tx` returns, whatever the
   * connection's own setting.
   */
  tx<T>(fn: () => T, durable = false): T {
    if (this.depth > 0) {
      this.depth++;
      try {
        return fn();
      } finally {
        this.depth--;
      }
    }
    const sync = durable && this.synchronous !== "FULL";
    try {
      if (sync) this.db.exec("PRAGMA synchronous = FULL");
      this.db.exec("BEGIN IMMEDIATE");
    } catch (err) {
      if (sync) this.db.exec(`PRAGMA synchronous = ${this.synchronous}`);
      throw storageError(err);
    }
    this.depth = 1;
    try {
      const out = fn();
      this.db.exec("COMMIT");
      return out;
    } catch (err) {
      try {
        if (this.db.isTransaction) this.db.exec("ROLLBACK");
      } catch {
        // SQLite may have rolled back itself (a full disk); nothing is left to undo
      }
      throw storageError(err);
    } finally {
      this.depth = 0;
      if (sync) this.db.exec(`PRAGMA synchronous = ${this.synchronous}`);
    }
  }

  /** One statement in its own durable write transaction (see tx). */
  write(sql: string, ...params: SQLInputValue[]) {
    return this.tx(() => this.run(sql, ...params), true);
  }

  /**
   * Copy the WAL into the database file and truncate it to zero bytes. It waits (up to the busy
   * timeout) for readers on an older snapshot; past that, their frames stay until a later one.
   */
  checkpoint(): void {
    this.get("PRAGMA wal_checkpoint(TRUNCATE)");
  }

  /** `PRAGMA integrity_check`: "ok", or the problems SQLite lists (at most `max`). */
  integrityCheck(max = 100): string[] {
    return this.all<{ integrity_check: string }>(`PRAGMA integrity_check(${max | 0})`).map(
      (r) => r.integrity_check,
    );
  }

  close(): void {
    if (!this.db.isOpen) return;
    this.statements.clear();
    try {
      this.db.exec("PRAGMA optimize");
    } catch {
      // a read-only or full database: nothing to optimise
    }
    this.db.close();
  }
}
