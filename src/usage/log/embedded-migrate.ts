import { closeSync, existsSync, openSync, readdirSync, readSync, renameSync } from "node:fs";
import { join } from "node:path";
import { DAY_MS } from "../../platform/day";
import { log } from "../../platform/log";
import type { Database } from "../../store/embedded/db";
import { presentAllKey, ROLLUP_NAMES, type Rollup, VIEWS } from "../analytics/cells";
import { addCounts, isUsageEvent, zeroCounts } from "../daily";
import type { UsageEvent } from "../event";
import { movedBatches } from "./batch";
import { fieldsOfKey } from "./cell-keys";
import type { EmbeddedWrites } from "./embedded-writes";
import { PeriodCells } from "./period";
import { firstHourKept } from "./port";

/**
 * Databases and DATA_DIRs of earlier layouts, moved into the log's tables once, at open, before
 * the service writes (each step resumable: a crash mid-way and a restart end with everything
 * moved once):
 *  - the per-event SQLite layout (`usage_events`: one JSON row per event; `usage_cells`: one row
 *    per analytics cell; `usage_brands`): events become batches per account and day that keep
 *    their ids, cells become the day and hour rows, and the old tables are dropped;
 *  - the JSONL store's `events/` folder (day files and `daily-archive.jsonl`): imported, then
 *    renamed `events.imported/`.
 * Progress goes to the log, one line per step.
 */

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
const ARCHIVE = "daily-archive.jsonl";
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Events read per query while moving the per-event log. */
const READ_EVENTS = 20_000;

const hasTable = (db: Database, name: string) =>
  db.get("SELECT 1 AS x FROM sqlite_schema WHERE type = 'table' AND name = ?", name) !== undefined;

/** Move earlier layouts into the log (nothing to do on a database of this layout). */
export function migrateEmbedded(w: EmbeddedWrites, dataDir?: string): void {
  if (hasTable(w.db, "usage_events")) movePerEventLog(w);
  if (dataDir) importDayFiles(w, dataDir);
}

/**
 * The per-event layout: its events (per account, in id order) into log rows without counting
 * them again, its cells into the day and hour rows, its usage_daily rows kept only where they
 * differ from the day's cells; then its tables dropped.
 */
function movePerEventLog(w: EmbeddedWrites): void {
  const db = w.db;
  const started = performance.now();
  const total = db.get<{ n: number }>("SELECT count(*) AS n FROM usage_events")?.n ?? 0;
  // cells of the layout before the brand bound (usage_meta `cells` below 2) are counted again
  // from the events for the days the log holds
  const cellsVersion =
    db.get<{ value: number }>("SELECT value FROM usage_meta WHERE name = 'cells'")?.value ?? 0;
  log("info", "usage log: moving the per-event layout (once)", { events: total });
  // 1. the events, each account's in id order, READ_EVENTS at a time
  const accounts = db.all<{ account: string }>("SELECT DISTINCT account FROM usage_events");
  let moved = 0;
  let shown = 0;
  for (const { account } of accounts) {
    for (let after = ""; ; ) {
      const rows = db.all<{ id: string; e: string }>(
        "SELECT id, e FROM usage_events WHERE account = ? AND id > ? ORDER BY id LIMIT ?",
        account,
        after,
        READ_EVENTS,
      );
      if (rows.length === 0) break;
      after = (rows[rows.length - 1] as { id: string }).id;
      const events: UsageEvent[] = [];
      for (const r of rows) {
        try {
          const e = JSON.parse(r.e);
          if (isUsageEvent(e)) events.push(e);
        } catch {}
      }
      w.tx(() => w.storeOnly(movedBatches(events)));
      moved += rows.length;
      if (moved - shown >= 100_000) {
        shown = moved;
        log("info", "usage log: events moved", { moved, of: total });
      }
    }
  }
  log("info", "usage log: events moved", { moved, of: total });
  // 2. the cells, a period at a time (every account's, every rollup's)
  const firstHour = firstHourKept(w.hourlyDays, w.now());
  const brandsOf = hasTable(db, "usage_brands");
  let periods = 0;
  for (const hourly of [false, true]) {
    const views = VIEWS.flatMap((v, i) => (v.startsWith(hourly ? "hour." : "day.") ? [i] : []));
    const list = db
      .all<{ period: string }>(
        "SELECT DISTINCT period FROM usage_cells WHERE view IN (SELECT value FROM json_each(?)) ORDER BY period",
        JSON.stringify(views),
      )
      .map((r) => r.period);
    for (const period of list) {
      const p = hourly
        ? Math.floor(Date.parse(`${period}:00:00Z`) / 3_600_000)
        : Math.floor(Date.parse(`${period}T00:00:00Z`) / DAY_MS);
      if (!Number.isFinite(p) || (hourly && p < firstHour)) continue;
      const cells = new Map<string, PeriodCells>();
      const of = (account: string) => {
        let c = cells.get(account);
        if (!c) {
          c = new PeriodCells();
          cells.set(account, c);
        }
        return c;
      };
      if (brandsOf)
        for (const r of db.all<{ account: string; brand: string }>(
          "SELECT account, brand FROM usage_brands WHERE period = ?",
          period,
        ))
          of(r.account).brands.push(decodeBrand(r.brand));
      for (const v of views) {
        const rollup = (VIEWS[v] as string).slice((VIEWS[v] as string).indexOf(".") + 1) as Rollup;
        const no = ROLLUP_NAMES.indexOf(rollup);
        for (const r of db.all<{
          account: string;
          key: string;
          n: number;
          e: number;
          r: number;
          h: Uint8Array;
        }>(
          "SELECT account, key, n, e, r, h FROM usage_cells WHERE view = ? AND period = ?",
          v,
          period,
        )) {
          const key = rollup === "all" ? presentAllKey(r.key) : r.key;
          of(r.account).add(no, fieldsOfKey(rollup, key), r.n, r.e, r.r, histPairs(r.h));
        }
      }
      w.tx(() => {
        for (const [account, c] of cells)
          w.writePeriods(
            w.strings.id(account),
            new Map([[`${hourly ? "usage_hours" : "usage_days"}|${p}`, c]]),
          );
      });
      periods++;
    }
  }
  log("info", "usage log: analytics cells moved", { periods });
  if (cellsVersion < 2 && moved > 0) {
    const r = w.rebuildNow();
    log("info", "usage log: days in the log counted again with bounded brands", r);
  }
  // 3. usage_daily: rows equal to their day's cells are the cells' now; the others stay
  w.tx(() => {
    const rows = db.all<{
      day: string;
      account: string;
      bucket: string;
      requests: number;
      errors: number;
      rate_limited: number;
    }>(
      "SELECT day, account, bucket, requests, errors, rate_limited FROM usage_daily ORDER BY account, day",
    );
    const byDay = new Map<string, typeof rows>();
    for (const r of rows) {
      const k = `${r.account}\u0000${r.day}`;
      const list = byDay.get(k) ?? [];
      list.push(r);
      byDay.set(k, list);
    }
    let kept = 0;
    for (const [k, list] of byDay) {
      const [account, day] = k.split("\u0000") as [string, string];
      const derived = w.dailyOf(account, day);
      const same =
        derived.size === list.length &&
        list.every((r) => {
          const d = derived.get(r.bucket);
          return (
            d &&
            d.requests === r.requests &&
            d.errors === r.errors &&
            d.rateLimited === r.rate_limited
          );
        });
      if (same) db.run("DELETE FROM usage_daily WHERE day = ? AND account = ?", day, account);
      else kept += list.length;
    }
    log("info", "usage log: daily counts moved", { rows: rows.length, keptApart: kept });
  });
  // 4. the old tables go, in the step's own transaction
  w.tx(() => {
    db.run("DELETE FROM usage_meta WHERE name = 'cells'");
    db.exec("DROP TABLE IF EXISTS usage_brands");
    db.exec("DROP TABLE IF EXISTS usage_cells");
    db.exec("DROP TABLE usage_events");
  });
  log("info", "usage log: per-event layout moved", {
    events: moved,
    ms: Math.round(performance.now() - started),
  });
}

/** A brand of usage_brands (encoded as in cell keys). */
const decodeBrand = (b: string): string => decodeURIComponent(b);

/** An old histogram BLOB (uint32 little-endian pairs) as pairs. */
function histPairs(blob: Uint8Array | null): number[] {
  const out: number[] = [];
  if (!blob) return out;
  for (let i = 0; i + 8 <= blob.byteLength; i += 8) {
    const bin = blob[i] as number;
    const n =
      ((blob[i + 4] as number) |
        ((blob[i + 5] as number) << 8) |
        ((blob[i + 6] as number) << 16) |
        ((blob[i + 7] as number) << 24)) >>>
      0;
    out.push(bin, n);
  }
  return out;
}

/** A JSONL file's lines, a chunk (about 4 MB) at a time; a torn last line comes last. */
function* lineChunks(path: string): Generator<string[]> {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
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

/** The events of a JSONL file, a chunk at a time; lines that are not events skipped with a warning. */
function* eventChunks(path: string): Generator<UsageEvent[]> {
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

/**
 * The JSONL store's `events/`: the archive's rows (usage_daily of days whose events were
 * removed) kept as the counts of their days, each day file stored and counted in one
 * transaction, then the folder renamed `events.imported/`.
 */
function importDayFiles(w: EmbeddedWrites, dataDir: string): void {
  const dir = join(dataDir, "events");
  if (!existsSync(dir)) return;
  const started = performance.now();
  const db = w.db;
  const archived = new Map<
    string,
    { accountId: string; day: string; bucket: string } & ReturnType<typeof zeroCounts>
  >();
  const archive = join(dir, ARCHIVE);
  if (existsSync(archive))
    for (const lines of lineChunks(archive))
      for (const l of lines) {
        let r: { accountId?: unknown; day?: unknown; bucket?: unknown } | null = null;
        try {
          r = l.trim() ? JSON.parse(l) : null;
        } catch {}
        if (!r || typeof r.accountId !== "string" || typeof r.day !== "string") continue;
        const k = `${r.accountId}\u0001${r.day}\u0001${r.bucket}`;
        const into = archived.get(k) ?? {
          accountId: r.accountId,
          day: r.day,
          bucket: String(r.bucket),
          ...zeroCounts(),
        };
        addCounts(into, r as ReturnType<typeof zeroCounts>);
        archived.set(k, into);
      }
  // an archived day's rows are its counts; inserted once (a restart finds them there)
  w.tx(() => {
    for (const r of archived.values())
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
  const days = readdirSync(dir)
    .map((f) => DAY_FILE.exec(f)?.[1])
    .filter((d): d is string => !!d)
    .sort();
  let total = 0;
  for (const day of days) {
    const file = join(dir, `${day}.jsonl`);
    let read = 0;
    let stored = 0;
    // an event written twice to its file (a replay of the JSONL store) is stored once
    const seen = new Set<string>();
    // a chunk per transaction: a restart stores the same batches again, found and skipped
    for (const chunk of eventChunks(file)) {
      read += chunk.length;
      if (seen.size > 4_000_000) seen.clear();
      const fresh: UsageEvent[] = [];
      for (const e of chunk)
        if (!seen.has(e.id)) {
          seen.add(e.id);
          fresh.push(e);
        }
      stored += w.append(movedBatches(fresh));
    }
    total += stored;
    log("info", "imported usage events", { file, read, stored });
  }
  let to = `${dir}.imported`;
  for (let i = 2; existsSync(to); i++) to = `${dir}.imported.${i}`;
  renameSync(dir, to);
  log("info", "usage event import done", {
    files: days.length,
    events: total,
    archivedRows: archived.size,
    movedTo: to,
    ms: Math.round(performance.now() - started),
  });
}
