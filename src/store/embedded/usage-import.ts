import { closeSync, existsSync, openSync, readdirSync, readSync, renameSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../platform/log";
import { addCounts, isUsageEvent, zeroCounts } from "../../usage/daily";
import type { DailyRow, UsageEvent } from "../../usage/port";
import type { Database } from "./db";

/**
 * The import of an older DATA_DIR's usage log into the SQLite store, once at open:
 * `events/<YYYY-MM-DD>.jsonl` day files and `events/daily-archive.jsonl` (usage_daily rows of
 * days whose events retention removed). Each day file is one transaction (INSERT OR IGNORE,
 * projected as appends are), so a crash mid-import and a restart end with every event stored
 * and counted once. When every file is in, `events/` becomes `events.imported/` (kept).
 */

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
const ARCHIVE = "daily-archive.jsonl";
const CHUNK_BYTES = 4 * 1024 * 1024;

/** A JSONL file's lines, a chunk (about 4 MB) at a time; a torn last line comes last. */
export function* lineChunks(path: string): Generator<string[]> {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  // bytes of a line not ended yet (decoded once whole: a chunk may cut a UTF-8 sequence)
  let pending: Buffer = Buffer.alloc(0);
  try {
    for (let pos = 0; ; ) {
      const n = readSync(fd, buf, 0, CHUNK_BYTES, pos);
      if (n === 0) break;
      pos += n;
      const end = buf.lastIndexOf(10, n - 1);
      if (end < 0) {
        pending = Buffer.concat([pending, buf.subarray(0, n)]);
        continue;
      }
      const text = Buffer.concat([pending, buf.subarray(0, end)]).toString("utf8");
      pending = Buffer.from(buf.subarray(end + 1, n));
      yield text.split("\n");
    }
    if (pending.length > 0) yield [pending.toString("utf8")];
  } finally {
    closeSync(fd);
  }
}

/**
 * A file of usage events (a day file, a spill file), a chunk at a time; lines that are not
 * events (a torn last line from a crash mid-write) are skipped with a warning.
 */
export function* eventChunks(path: string): Generator<UsageEvent[]> {
  let line = 0;
  for (const lines of lineChunks(path)) {
    const out: UsageEvent[] = [];
    for (const l of lines) {
      line++;
      if (!l.trim()) continue;
      let e: unknown;
      try {
        e = JSON.parse(l);
      } catch {}
      if (isUsageEvent(e)) out.push(e);
      else log("warn", "skipped an unreadable usage event line", { file: path, line });
    }
    yield out;
  }
}

/** Every usage event of a file (small files: spill files, tests). */
export const readEventFile = (path: string): UsageEvent[] =>
  existsSync(path) ? [...eventChunks(path)].flat() : [];

/** The archive's rows, a row's repeats summed. */
function archiveRows(path: string): DailyRow[] {
  const rows = new Map<string, DailyRow>();
  if (!existsSync(path)) return [];
  for (const lines of lineChunks(path))
    for (const l of lines) {
      let r: DailyRow | null = null;
      try {
        r = l.trim() ? (JSON.parse(l) as DailyRow) : null;
      } catch {}
      if (!r || typeof r.accountId !== "string" || typeof r.day !== "string") continue;
      const k = `${r.accountId}\u0001${r.day}\u0001${r.bucket}`;
      const into = rows.get(k) ?? {
        accountId: r.accountId,
        day: r.day,
        bucket: r.bucket,
        ...zeroCounts(),
      };
      addCounts(into, r);
      rows.set(k, into);
    }
  return [...rows.values()];
}

/** What the import needs of the usage store (usage.ts): its database, and ingest. */
interface IngestTarget {
  readonly db: Database;
  ingest(events: readonly UsageEvent[], opts: { daily?: boolean }): number;
}

/** Import DATA_DIR/events into the store (nothing to do without that folder). */
export function importLegacyUsage(store: IngestTarget, dataDir: string): void {
  const dir = join(dataDir, "events");
  if (!existsSync(dir)) return;
  const started = performance.now();
  const db = store.db;
  const archived = archiveRows(join(dir, ARCHIVE));
  // an archived day's rows are its usage_daily; inserted once (a restart finds them there)
  db.tx(() => {
    for (const r of archived)
      db.run(
        `INSERT INTO usage_daily (account, day, bucket, requests, errors, rate_limited)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        r.accountId,
        r.day,
        r.bucket,
        r.requests,
        r.errors,
        r.rateLimited,
      );
  });
  const archivedDays = new Set(archived.map((r) => r.day));
  const days = readdirSync(dir)
    .map((f) => DAY_FILE.exec(f)?.[1])
    .filter((d): d is string => !!d)
    .sort();
  let total = 0;
  for (const day of days) {
    const file = join(dir, `${day}.jsonl`);
    let read = 0;
    const stored = db.tx(() => {
      let n = 0;
      for (const chunk of eventChunks(file)) {
        read += chunk.length;
        // a day both archived and on file (its removal was interrupted): the archive counts it
        n += store.ingest(chunk, { daily: !archivedDays.has(day) });
      }
      return n;
    });
    total += stored;
    log("info", "imported usage events", { file, read, stored });
  }
  let to = `${dir}.imported`;
  for (let i = 2; existsSync(to); i++) to = `${dir}.imported.${i}`;
  renameSync(dir, to);
  log("info", "usage event import done", {
    files: days.length,
    events: total,
    archivedRows: archived.length,
    movedTo: to,
    ms: Math.round(performance.now() - started),
  });
}
