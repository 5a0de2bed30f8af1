import { existsSync, mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../platform/log";
import type { Bucket } from "../../quota/limits";
import type { CountableEvent } from "../../quota/service";
import { type CellHint, CellProjection, type View } from "../../usage/analytics/cells";
import { DailyProjection } from "../../usage/daily";
import type { DailyRow, ExportQuery, UsageEvent, UsageEventStore } from "../../usage/port";
import { JsonlEncoder } from "../../usage/serialize";
import { exportStream } from "./event-export";
import { AccountNumbers, addWritten, catchUp, DayIndex, idMs } from "./event-index";
import { IdHashSet, lineChunks, parseEvent, tallyEventFile, warnUnreadable } from "./event-scan";
import { JsonlLog } from "./jsonl";

/** The UTC day of a UUIDv7 event id (its first 48 bits are the epoch ms). */
const dayOfId = (id: string): string | null => {
  const ms = idMs(id);
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : null;
};

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
/** usage_daily rows of days whose event files retention removed (events/daily-archive.jsonl) */
const ARCHIVE = "daily-archive.jsonl";
/** days whose event ids stay in memory for de-duplication (older days are read on demand) */
const ID_DAYS = 3;
/** id sets loaded for checked appends are dropped this long after the last one */
const ID_CACHE_MS = 60_000;
/** day files kept open for appending */
const OPEN_FILES = 2;

export interface EmbeddedUsageOptions {
  /** fdatasync a day file at most this often, in ms (USAGE_SYNC_MS); 0: after every append */
  syncMs?: number;
}

/** A day file open for appending. */
interface DayFile {
  fh: FileHandle;
  /** performance.now() of the last fdatasync (or of the open) */
  syncedAt: number;
  /** events written since the last fdatasync */
  unsynced: number;
  /** the file's size: where the next append lands */
  size: number;
}

/** Events by UTC day; a batch of one day (the usual case) is passed through as it is. */
function groupByDay(events: UsageEvent[]): Map<string, UsageEvent[]> {
  const first = events[0]?.day;
  if (first !== undefined && events.every((e) => e.day === first))
    return new Map([[first, events]]);
  const byDay = new Map<string, UsageEvent[]>();
  for (const e of events) {
    const list = byDay.get(e.day);
    if (list) list.push(e);
    else byDay.set(e.day, [e]);
  }
  return byDay;
}

/**
 * Read one day file without modifying it. Unreadable lines (a torn last line from a crash
 * mid-write, or anything that is not a usage event) are skipped with a warning, never fatal.
 */
export function readEventFile(path: string): UsageEvent[] {
  return [...eventChunks(path)].flat();
}

/**
 * Stream one day file: its usage events a chunk (about 4 MB of lines) at a time, so a day of
 * millions of events is never held in memory at once. Unreadable lines are skipped with a
 * warning (`torn`: the file's last line, without its newline).
 */
export function* eventChunks(path: string): Generator<UsageEvent[]> {
  let line = 0;
  for (const { text, last } of lineChunks(path)) {
    const lines = text.split("\n");
    const out: UsageEvent[] = [];
    lines.forEach((l, i) => {
      line++;
      const e = parseEvent(l);
      if (e) out.push(e);
      else if (l.trim()) warnUnreadable(path, line, last && i === lines.length - 1);
    });
    yield out;
  }
}

/** today's and yesterday's events counted by key, account, bucket and status (tallyOfDay) */
class DayTally {
  private days = new Map<string, Map<string, CountableEvent[]>>();
  /** days before this one are not tallied */
  private from: string;

  constructor(now = Date.now()) {
    this.from = dayBefore(new Date(now).toISOString().slice(0, 10));
  }

  add(day: string, accountId: string, keyId: string, bucket: Bucket, status: number, n = 1) {
    if (day < this.from) return;
    let keys = this.days.get(day);
    if (!keys) {
      keys = new Map();
      this.days.set(day, keys);
      // a new day: the one before it is still asked for around midnight, older ones are not
      const from = dayBefore(day);
      if (from > this.from) {
        this.from = from;
        for (const d of this.days.keys()) if (d < from) this.days.delete(d);
      }
    }
    const k = keyId === "" ? `\u0000${accountId}` : keyId;
    let rows = keys.get(k);
    if (!rows) {
      rows = [];
      keys.set(k, rows);
    }
    for (const r of rows)
      if (r.bucket === bucket && r.status === status && r.accountId === accountId) {
        r.events = (r.events ?? 1) + n;
        return;
      }
    rows.push({ day, accountId, keyId, bucket, status, events: n });
  }

  /** the day's tally, or null for a day before the tallied ones */
  of(day: string): CountableEvent[] | null {
    if (day < this.from) return null;
    return [...(this.days.get(day)?.values() ?? [])].flat();
  }
}

const dayBefore = (day: string) =>
  new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

/**
 * Embedded usage event store: append-only JSONL files, one per UTC day, under
 * DATA_DIR/events/. Every append is written (asynchronously, off the event loop) before it
 * resolves, so it survives a crash of the process. Durability against power loss is a group
 * commit: a day file is fdatasync'd at most every `syncMs` (USAGE_SYNC_MS): an append that
 * finds the last sync older than that syncs before it resolves, any other arms a trailing sync
 * within the window, and close() syncs whatever is left. With `syncMs` 0 every append is
 * fdatasync'd before it resolves. At start the files are replayed into the in-memory
 * usage_daily projection. Event ids are de-duplicated on replay and on every append that is
 * not `fresh` (retries, spill replays: the day's ids are then read from its file and kept in
 * memory while such appends keep coming), so replaying a spill file twice changes nothing.
 * Fresh appends (new ids, first attempt) skip the check: the hot path holds no per-event id set.
 */
export class EmbeddedUsageStore implements UsageEventStore {
  readonly dir: string;
  private projection = new DailyProjection();
  private ids = new Map<string, IdHashSet>();
  private tally = new DayTally();
  private files = new Map<string, DayFile>();
  private queue: Promise<unknown> = Promise.resolve();
  private eventCount = 0;
  /** when the last checked (not fresh) append ran */
  private lastChecked = 0;
  private readonly syncMs: number;
  private syncTimer: ReturnType<typeof setTimeout> | null = null;
  private syncs = 0;
  /** reused by every append: the queue runs one append at a time, each awaiting its write */
  private encoder = new JsonlEncoder();
  /**
   * the analytics cells and misses: built from the log in the background after start (which
   * itself only counts usage_daily; a query before the build ends waits for it), then kept
   * current by every append
   */
  private analytics: CellProjection | null = null;
  private analyticsBuild: Promise<CellProjection> | null = null;
  private buildTimer: ReturnType<typeof setTimeout> | null = null;
  /** where each account's lines are, per day file (built with the cells, kept by appends) */
  private lineIndex = new Map<string, DayIndex>();
  private accountNumbers = new AccountNumbers();

  constructor(dataDir: string, opts: EmbeddedUsageOptions = {}) {
    this.syncMs = opts.syncMs ?? 0;
    this.dir = join(dataDir, "events");
    mkdirSync(this.dir, { recursive: true });
    this.replay();
    this.buildTimer = setTimeout(() => void this.cellProjection().catch(() => {}), 0);
    this.buildTimer.unref?.();
  }

  /** number of distinct events replayed or appended since start */
  get size() {
    return this.eventCount;
  }

  /** fdatasync calls made on day files since start, and events written but not yet synced */
  get syncStats() {
    let unsynced = 0;
    for (const f of this.files.values()) unsynced += f.unsynced;
    return { syncs: this.syncs, unsynced };
  }

  append(events: UsageEvent[], opts: { fresh?: boolean } = {}): Promise<number> {
    const run = this.queue.then(() => this.appendNow(events, opts.fresh === true));
    this.queue = run.catch(() => {});
    return run;
  }

  async daily(accountId: string, from: string, to: string) {
    return this.projection.query(accountId, from, to);
  }

  async cells(accountId: string, view: View, from: string, to: string, hint?: CellHint) {
    return (await this.cellProjection()).periods(accountId, view, from, to, hint);
  }

  async misses(accountId: string | null, from: string, to: string) {
    return (await this.cellProjection()).misses(accountId, from, to);
  }

  /** Export page: the whole page read out of exportStream. */
  async exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]> {
    const page = await this.exportStream(accountId, q);
    const out: UsageEvent[] = [];
    const decoder = new TextDecoder();
    for (let chunk = await page.next(); chunk; chunk = await page.next())
      for (const l of decoder.decode(chunk).split("\n"))
        if (l) out.push(JSON.parse(l) as UsageEvent);
    return out;
  }

  /**
   * Export page: the day files from..to (from the cursor's day on) in order, a day's ids all
   * preceding the next day's (an id carries its event's time); of each, only the account's lines
   * (the day's line index, caught up with the file first) are read.
   */
  async exportStream(accountId: string, q: ExportQuery) {
    const first = q.after && q.after.length >= 13 ? dayOfId(q.after) : null;
    const days = this.days()
      .filter((d) => d >= q.from && d <= q.to && (first === null || d >= first))
      .map((day) => ({ day, path: this.path(day), index: this.indexOf(day) }));
    return exportStream(accountId, this.accountNumbers.find(accountId), days, q);
  }

  /** the day's line index, caught up with its file */
  private indexOf(day: string): DayIndex {
    const idx = this.lineIndex.get(day) ?? this.newIndex(day);
    catchUp(this.path(day), idx, this.accountNumbers);
    return idx;
  }

  tallyOfDay(day: string): CountableEvent[] | null {
    return this.tally.of(day);
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    const seen = new IdHashSet();
    // streamed in chunks: the day's events are never all in memory
    for (const chunk of eventChunks(this.path(day)))
      for (const e of chunk) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
        yield e;
      }
  }

  async rebuildDaily(progress?: (p: { day: string; events: number }) => void) {
    await this.queue;
    this.projection.clear();
    this.ids.clear();
    this.tally = new DayTally();
    this.eventCount = 0;
    this.lineIndex.clear();
    this.replay();
    // the old cells go first: never two projections in memory at once
    this.analytics = null;
    this.analytics = await this.scanCells(progress);
    return { events: this.eventCount, rows: this.projection.size };
  }

  /**
   * the analytics projection, built from the log in the append queue (appends wait: none is
   * counted twice or missed), a day file at a time with the event loop free in between
   */
  private cellProjection(): Promise<CellProjection> {
    if (this.analytics) return Promise.resolve(this.analytics);
    if (!this.analyticsBuild) {
      const run = this.queue.then(async () => {
        this.analytics ??= await this.scanCells(undefined, true);
        return this.analytics;
      });
      this.queue = run.catch(() => {});
      // a failed build is tried again by the next query
      this.analyticsBuild = run.finally(() => {
        this.analyticsBuild = null;
      });
    }
    return this.analyticsBuild;
  }

  /** the analytics cells and misses of every event on file, each id once */
  private async scanCells(
    progress?: (p: { day: string; events: number }) => void,
    yieldEachDay = false,
  ): Promise<CellProjection> {
    const cells = new CellProjection();
    for (const day of this.days()) {
      const path = this.path(day);
      const seen = new IdHashSet(statSync(path).size / 240);
      let events = 0;
      this.indexOf(day);
      for (const chunk of eventChunks(path))
        for (const e of chunk)
          if (seen.add(e.id)) {
            cells.add(e);
            events++;
          }
      progress?.({ day, events });
      if (yieldEachDay) await new Promise((r) => setImmediate(r));
    }
    return cells;
  }

  async close() {
    if (this.buildTimer) clearTimeout(this.buildTimer);
    await this.queue;
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.syncTimer = null;
    for (const [day, f] of this.files) await this.closeFile(day, f);
  }

  private path(day: string) {
    return join(this.dir, `${day}.jsonl`);
  }

  private days(): string[] {
    return readdirSync(this.dir)
      .map((f) => DAY_FILE.exec(f)?.[1])
      .filter((d): d is string => !!d)
      .sort();
  }

  /**
   * Retention: the rows of each day before `beforeDay` are appended to the archive (fdatasync'd),
   * then its file is removed. A crash between the two leaves both: the archive wins at replay.
   */
  async prune(beforeDay: string) {
    await this.queue;
    let days = 0;
    let events = 0;
    const archive = new JsonlLog<DailyRow>(join(this.dir, ARCHIVE));
    try {
      const archived = new Set(archive.readAll().map((r) => r.day));
      for (const day of this.days()) {
        if (day >= beforeDay) break;
        const open_ = this.files.get(day);
        if (open_) await this.closeFile(day, open_);
        if (!archived.has(day)) {
          const rows = this.projection.rowsOfDay(day);
          for (const r of rows) events += r.requests;
          if (rows.length > 0) archive.append(rows);
        }
        unlinkSync(this.path(day));
        this.ids.delete(day);
        this.lineIndex.delete(day);
        days++;
      }
    } finally {
      archive.close();
    }
    return { days, events };
  }

  private replay() {
    const archive = new JsonlLog<DailyRow>(join(this.dir, ARCHIVE));
    const rows = archive.readAll();
    archive.close();
    this.projection.addRows(rows);
    const archived = new Set(rows.map((r) => r.day));
    for (const day of this.days()) {
      // a day both archived and on file: removal was interrupted; the archive counts it
      if (archived.has(day)) continue;
      const path = this.path(day);
      // streamed and counted per account, key, bucket and status: only the day's id hashes
      // stay in memory (a 6,000,000-event day: docs/usage-events.md)
      const r = tallyEventFile(path, day, new IdHashSet(statSync(path).size / 240));
      for (const t of r.rows) {
        this.projection.add(t.accountId, day, t.bucket, t.status, t.requests);
        this.tally.add(day, t.accountId, t.keyId, t.bucket, t.status, t.events);
      }
      this.projection.addAll(r.others);
      for (const e of r.others) this.tally.add(e.day, e.accountId, e.keyId, e.bucket, e.status);
      this.eventCount += r.events;
    }
  }

  private async appendNow(events: UsageEvent[], fresh: boolean): Promise<number> {
    if (!fresh) this.lastChecked = Date.now();
    else if (this.ids.size > 0 && Date.now() - this.lastChecked > ID_CACHE_MS) this.ids.clear();
    const byDay = groupByDay(events);
    let stored = 0;
    for (const [day, list] of byDay) {
      // a fresh batch keeps a loaded id set current; a checked one loads it when missing
      const ids = fresh ? this.ids.get(day) : this.idsFor(day);
      const batch = new Set<string>();
      const toWrite = fresh
        ? list
        : list.filter((e) => {
            if (ids?.has(e.id) || batch.has(e.id)) return false;
            batch.add(e.id);
            return true;
          });
      if (toWrite.length === 0) continue;
      // fresh events come straight from eventOf: already in canonical form
      const bytes = this.encoder.encode(toWrite, fresh);
      const at = await this.write(day, bytes, toWrite.length);
      const idx = this.lineIndex.get(day) ?? (at === 0 ? this.newIndex(day) : undefined);
      if (idx) addWritten(idx, this.accountNumbers, at, bytes, toWrite);
      if (ids) for (const e of toWrite) ids.add(e.id);
      this.projection.addAll(toWrite);
      this.analytics?.addAll(toWrite);
      for (const e of toWrite) this.tally.add(e.day, e.accountId, e.keyId, e.bucket, e.status);
      this.eventCount += toWrite.length;
      stored += toWrite.length;
    }
    return stored;
  }

  /** ids of one day: kept for the most recent days, read back from the file for older ones */
  private idsFor(day: string): IdHashSet {
    const cached = this.ids.get(day);
    if (cached) return cached;
    const path = this.path(day);
    const ids = new IdHashSet(existsSync(path) ? statSync(path).size / 240 : 0);
    tallyEventFile(path, day, ids);
    this.remember(day, ids);
    return ids;
  }

  private remember(day: string, ids: IdHashSet) {
    this.ids.set(day, ids);
    if (this.ids.size <= ID_DAYS) return;
    const keep = [...this.ids.keys()].sort().slice(-ID_DAYS);
    for (const d of this.ids.keys()) if (!keep.includes(d)) this.ids.delete(d);
  }

  /** a new day file's (empty) line index */
  private newIndex(day: string): DayIndex {
    const idx = new DayIndex(day);
    this.lineIndex.set(day, idx);
    return idx;
  }

  /** append to the day's file; resolves to the offset the bytes were written at */
  private async write(day: string, buf: Uint8Array, events: number): Promise<number> {
    const f = await this.file(day);
    const at = f.size;
    try {
      let off = 0;
      while (off < buf.length) {
        const n = (await f.fh.write(buf, off)).bytesWritten;
        off += n;
        f.size += n;
      }
      f.unsynced += events;
      if (performance.now() - f.syncedAt >= this.syncMs) await this.sync(f);
      else this.armSync(f);
      return at;
    } catch (err) {
      // reopen next time: the tail may now be a partial line, which reopening terminates
      this.files.delete(day);
      await f.fh.close().catch(() => {});
      throw err;
    }
  }

  private async sync(f: DayFile) {
    await f.fh.datasync();
    this.syncs++;
    f.syncedAt = performance.now();
    f.unsynced = 0;
  }

  /** the trailing sync of the group commit: runs in the append queue when the window ends */
  private armSync(f: DayFile) {
    if (this.syncTimer) return;
    const wait = Math.max(0, f.syncedAt + this.syncMs - performance.now());
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      const run = this.queue.then(() => this.syncAll());
      this.queue = run.catch(() => {});
    }, wait);
    this.syncTimer.unref?.();
  }

  /** fdatasync every day file with unsynced events; a file that fails is closed (reopened later) */
  private async syncAll() {
    for (const [day, f] of this.files) {
      if (f.unsynced === 0) continue;
      try {
        await this.sync(f);
      } catch (err) {
        log(
          "error",
          "usage event log fdatasync failed; events written since the last sync may not survive a power loss",
          {
            file: this.path(day),
            events: f.unsynced,
            error: (err as Error).message,
          },
        );
        this.files.delete(day);
        await f.fh.close().catch(() => {});
      }
    }
  }

  /** sync (if needed) and close one day file */
  private async closeFile(day: string, f: DayFile) {
    this.files.delete(day);
    if (f.unsynced > 0)
      await this.sync(f).catch((err) =>
        log("error", "usage event log fdatasync failed at close", {
          file: this.path(day),
          events: f.unsynced,
          error: (err as Error).message,
        }),
      );
    await f.fh.close().catch(() => {});
  }

  /** the day's file opened for appending; a torn tail (no final newline) is terminated first */
  private async file(day: string): Promise<DayFile> {
    const open_ = this.files.get(day);
    if (open_) return open_;
    const fh = await open(this.path(day), "a+");
    let size = 0;
    try {
      size = (await fh.stat()).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await fh.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) size += (await fh.write("\n")).bytesWritten;
      }
    } catch (err) {
      await fh.close().catch(() => {});
      throw err;
    }
    const f: DayFile = { fh, syncedAt: performance.now(), unsynced: 0, size };
    this.files.set(day, f);
    for (const d of [...this.files.keys()].sort()) {
      if (this.files.size <= OPEN_FILES) break;
      const old = this.files.get(d);
      if (d !== day && old) await this.closeFile(d, old);
    }
    return f;
  }
}
