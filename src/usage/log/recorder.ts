import { mkdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../platform/log";
import type { Bucket } from "../../quota/limits";
import type { Principal } from "../../quota/principal";
import type { RecorderCondition } from "../recorder-condition";
import { type Batch, bucketIndex, dayNo, emptyBatch, MAX_BATCH_EVENTS, mintQ, NONE } from "./batch";
import type { UsageLog } from "./port";
import {
  SpillFile,
  SpillReserve,
  spillBytes,
  spilledBatches,
  spillFiles,
  spillName,
} from "./spill";

/** What the recorder reads of a metered request (usage/meter.ts's Meter). */
export interface Metered {
  principal: Principal;
  bucket: Bucket;
  /** when its quota unit was consumed: the event's time */
  at: Date;
  route: string;
  slug: string | null;
  variant: string | null;
  format?: string;
  miss?: string[];
}

/** Receives usage events off the request path (buffers and writes them on its own). */
export interface UsageRecorder {
  /**
   * Record a metered request's event: its fields written into the current chunk, nothing else.
   * With USAGE_DURABILITY=strict it returns a promise that resolves once the event is durable
   * (rejects when it was dropped): the request is acknowledged after it.
   */
  record(m: Metered, status: number, latencyUs: number): undefined | Promise<void>;
  /** write whatever is recorded now (tests, admin, shutdown) */
  flush(): Promise<void>;
  /** flush, then stop; called on shutdown */
  close(): Promise<void>;
  /** whether events pile up unwritten (readiness); absent = always ok */
  condition?(): RecorderCondition;
  /** USAGE_DURABILITY=strict: `record` returns a promise to await before answering */
  readonly strict?: boolean;
  /** false when a metered request must be refused: its event could not be kept */
  accepting?(): boolean;
}

export const noopRecorder: UsageRecorder = {
  record: () => undefined,
  async flush() {},
  async close() {},
};

export interface RecorderOptions {
  /** write at most this long after the first recorded event (USAGE_FLUSH_MS) */
  flushMs: number;
  /** write as soon as this many events are recorded (USAGE_FLUSH_EVENTS) */
  flushEvents: number;
  /** where batches go when the store is down or behind (DATA_DIR/spill) */
  spillDir: string;
  /** events held in memory while the store is down; default max(10,000, 2 × flushEvents) */
  maxBuffered?: number;
  /**
   * the writer is behind when a buffered event is older than this while a write runs or the
   * store is down: the buffer then goes to a spill file at once, so a crash (kill -9) loses at
   * most this much recent traffic (plus the write under way). Default 2 × flushMs.
   */
  maxLagMs?: number;
  /** most events held in memory when they can be neither written nor spilled (a full disk) */
  maxHeld?: number;
  /**
   * past `maxHeld` (USAGE_ON_STORE_FULL): `serve` drops further events (counted in `dropped`),
   * `refuse` makes `accepting()` false so metered requests are refused before they are served
   */
  onFull?: "serve" | "refuse";
  /** disk set aside for held events at shutdown (spill.ts SpillReserve); 0: none */
  reserveBytes?: number;
  /** most bytes of spill files (USAGE_SPILL_MAX_MB); past it events are held, then onFull */
  spillMaxBytes?: number;
  /**
   * USAGE_DURABILITY. `batched`: `record` returns at once; a crash may lose the last moments of
   * events. `strict`: `record` returns a promise that settles once the event is durable (written
   * by a store append that synced, or in a spill file), and a write starts as soon as none runs
   * (group commit).
   */
  durability?: "batched" | "strict";
  /** retry delay after a failed write: doubles from min to max, with jitter */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** replay spill files left by an earlier process: `now` (default) or when `startReplay` is called */
  replay?: "now" | "later";
}

export interface RecorderStats {
  recorded: number;
  written: number;
  buffered: number;
  spilled: number;
  replayed: number;
  dropped: number;
  failures: number;
  /** bytes in spill files now */
  spillBytes: number;
  /** spill files waiting for their replay */
  spillFiles: number;
}

/** Fields of a record in a chunk's Int32Array. */
const F = 9;
const F_ACCOUNT = 0;
const F_KEY = 1;
const F_TIER = 2;
const F_ROUTE = 3;
const F_SLUG = 4;
const F_VARIANT = 5;
const F_FORMAT = 6;
const F_BUCKET = 7;
const F_STATUS = 8;
/** Records a chunk holds before it is sealed whatever the timer says. */
const CHUNK_CAP = 8192;
/** Strings the request thread interns before it starts over (at the next seal). */
const INTERN_CAP = 100_000;
/** Most events one append carries. */
const APPEND_CAP = 65_536;

/** A strict caller waiting for its chunk to be durable. */
interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
  /** batches of the chunk not durable yet */
  left: number;
  failed: boolean;
}

/** Records of metered requests as fixed-width integers, preallocated. */
class Chunk {
  readonly at = new Float64Array(CHUNK_CAP);
  readonly f = new Int32Array(CHUNK_CAP * F);
  readonly lat = new Uint32Array(CHUNK_CAP);
  n = 0;
  miss: Map<number, string[]> | null = null;
  waiter: Waiter | null = null;
}

/**
 * The usage recorder. On the request path, `record` writes the event's fields as integers (its
 * time, strings interned once: account, key, tier, route, slug, variant, format; bucket, status,
 * latency in µs) into a preallocated chunk: no object, id or string is made per event. A chunk
 * is sealed `flushMs` after its first record, at `flushEvents` records (strict: as soon as no
 * write runs), or at close; sealing folds its 429 refusals (one event per key, bucket and second,
 * with `count`) and makes its batches (batch.ts: one per account and UTC day, numbered), which
 * the store appends in one call; one write at a time.
 *
 * When a write fails the batches go back to the front of the buffer and are retried with
 * exponential backoff; the buffer goes to a spill file (spill.ts) at once, and when the writer is
 * behind (a buffered event older than `maxLagMs` while a write runs) or past `maxBuffered`.
 * Spill files are replayed in the background once writes succeed and at start (`replay`): their
 * batches keep their ids, so a replay is exactly-once. When a spill file cannot be written
 * either (a full disk), events stay in memory up to `maxHeld` (degraded past `maxBuffered`),
 * then `onFull` decides.
 */
export class LogRecorder implements UsageRecorder {
  // the request side
  private strings: string[] = [];
  private ids = new Map<string, number>();
  /** bumped when the interned strings start over: cached principal ids are stale then */
  private generation = 0;
  private principals = new WeakMap<Principal, { g: number; ids: [number, number, number] }>();
  private chunk = new Chunk();
  private spare: Chunk | null = new Chunk();

  // the writer side
  /** batches to write, oldest first */
  private buffer: Batch[] = [];
  private buffered = 0;
  /** when the oldest buffered event was recorded (epoch ms) */
  private oldest = Number.POSITIVE_INFINITY;
  private waiting = new Map<Batch, Waiter>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** strict mode, the store down: the spill of the events recorded since (one per tick) */
  private spillTimer: ReturnType<typeof setTimeout> | null = null;
  private armedMs = -1;
  private running: Promise<void> | null = null;
  /** consecutive failed writes; > 0 means the store is considered down */
  private failures = 0;
  private totalFailures = 0;
  private spill: SpillFile | null = null;
  private spillPending = false;
  private replaying = false;
  private closed = false;
  private readonly counters = { recorded: 0, written: 0, spilled: 0, replayed: 0, dropped: 0 };
  private spillRetryAt = 0;
  private degradedSince: number | null = null;
  private readonly reserve: SpillReserve;
  private reserved: boolean;
  private readonly maxBuffered: number;
  private readonly maxLag: number;
  private readonly maxHeld: number;
  private readonly backoffMin: number;
  private readonly backoffMax: number;
  private readonly spillMax: number;
  /** bytes of spill files, as last counted (and added to as this process spills) */
  private spillSize = 0;
  readonly strict: boolean;

  constructor(
    private store: Pick<UsageLog, "append" | "events"> & Pick<Partial<UsageLog>, "backlog">,
    private opts: RecorderOptions,
  ) {
    this.strict = opts.durability === "strict";
    this.maxBuffered = opts.maxBuffered ?? Math.max(10_000, 2 * opts.flushEvents);
    this.maxLag = opts.maxLagMs ?? 2 * opts.flushMs;
    this.maxHeld = opts.maxHeld ?? 5 * this.maxBuffered;
    this.backoffMin = opts.backoffMinMs ?? 100;
    this.backoffMax = opts.backoffMaxMs ?? 30_000;
    this.spillMax = opts.spillMaxBytes ?? Number.POSITIVE_INFINITY;
    mkdirSync(opts.spillDir, { recursive: true });
    // about 40 bytes a held event in frames; 16 MB at most unless asked (USAGE_SPILL_RESERVE_MB)
    this.reserve = new SpillReserve(
      opts.spillDir,
      opts.reserveBytes ?? Math.min(16 * 1024 * 1024, 64 * this.maxHeld),
    );
    // first: a reserve a stopped process filled becomes a spill file, replayed below
    this.reserved = this.reserve.ensure();
    this.spillSize = spillBytes(opts.spillDir);
    if (spillFiles(opts.spillDir).length > 0) {
      this.spillPending = true;
      if ((opts.replay ?? "now") === "now") this.arm(0);
    }
  }

  /** Replay the spill files an earlier process left (with `replay: "later"`: once ready). */
  startReplay(): void {
    if (this.spillPending && !this.running && !this.timer && !this.closed) this.arm(0);
  }

  // ---- the request path ----

  private intern(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }

  private principalIds(p: Principal): [number, number, number] {
    const c = this.principals.get(p);
    if (c && c.g === this.generation) return c.ids;
    const ids: [number, number, number] = [
      this.intern(p.accountId),
      this.intern(p.keyId ?? ""),
      this.intern(p.tier),
    ];
    this.principals.set(p, { g: this.generation, ids });
    return ids;
  }

  record(m: Metered, status: number, latencyUs: number): undefined | Promise<void> {
    this.counters.recorded++;
    let c = this.chunk;
    if (this.buffered + c.n >= this.maxHeld && !this.closed) {
      // nothing takes events (store and disk failing) and memory is at its bound
      this.counters.dropped++;
      this.dropped("usage events dropped: the store and the spill file fail, memory is full", 1);
      return this.strict && status !== 429
        ? Promise.reject(new Error("usage event dropped: memory is full"))
        : undefined;
    }
    if (c.n === CHUNK_CAP) {
      this.seal();
      c = this.chunk;
    }
    const i = c.n++;
    c.at[i] = m.at.getTime();
    const p = this.principalIds(m.principal);
    const o = i * F;
    const f = c.f;
    f[o + F_ACCOUNT] = p[0];
    f[o + F_KEY] = p[1];
    f[o + F_TIER] = p[2];
    f[o + F_ROUTE] = this.intern(m.route);
    f[o + F_SLUG] = m.slug === null ? NONE : this.intern(m.slug);
    f[o + F_VARIANT] = m.variant === null ? NONE : this.intern(m.variant);
    f[o + F_FORMAT] = m.format === undefined ? NONE : this.intern(m.format);
    f[o + F_BUCKET] = bucketIndex(m.bucket);
    f[o + F_STATUS] = status;
    c.lat[i] = Math.min(latencyUs, 0xffffffff);
    if (m.miss !== undefined && m.miss.length > 0) {
      c.miss ??= new Map();
      c.miss.set(i, m.miss);
    }
    if (this.closed) {
      // after close (a response that finished late): straight to a spill file
      this.seal();
      const late = this.buffer.splice(0);
      this.buffered = 0;
      if (!this.spillBatches(late, "recorded after close"))
        this.drop(late, "usage event recorded after close lost: spill file not writable");
      this.closeSpill();
      return;
    }
    let durable: Promise<void> | undefined;
    if (this.strict && status !== 429) {
      if (!c.waiter) {
        const w = { left: 0, failed: false } as Waiter;
        w.promise = new Promise<void>((resolve, reject) => {
          w.resolve = resolve;
          w.reject = reject;
        });
        // a waiter no caller awaited (every request of the chunk gone) must not go unhandled
        w.promise.catch(() => {});
        c.waiter = w;
      }
      durable = c.waiter.promise;
    }
    // more in memory than the bound: to disk now
    if (this.buffered + c.n > this.maxBuffered) {
      this.seal();
      this.spillBuffer();
    }
    // a write runs or the store is down: the chunk waits (or goes to disk now when behind; in
    // strict mode with the store down, at once: its requests wait for a spill file, not a retry)
    if (this.running || this.failures > 0) {
      const first = this.buffered > 0 ? this.oldest : (this.chunk.at[0] as number);
      if (this.buffered + this.chunk.n > 0 && m.at.getTime() - first > this.maxLag) {
        this.seal();
        this.spillBuffer("writer behind: events older than the lag bound");
      } else if (durable && this.failures > 0 && !this.spillTimer)
        // the events of this tick go to one spill file write together
        this.spillTimer = setTimeout(() => {
          this.spillTimer = null;
          if (this.failures === 0 || this.closed) return;
          this.seal();
          this.spillBuffer("event store down");
        }, 0);
      if (this.failures > 0 && !this.running && !this.timer) this.arm(this.backoffMin);
      return durable;
    }
    if (this.strict || this.chunk.n >= this.opts.flushEvents) {
      if (this.armedMs !== 0) this.arm(0);
    } else if (!this.timer) this.arm(this.opts.flushMs);
    return durable;
  }

  /**
   * The current chunk made into batches (its 429s folded) and buffered; a new chunk begins. The
   * interned strings start over when there are many: nothing refers to them once sealed.
   */
  private seal(): void {
    const c = this.chunk;
    if (c.n === 0) return;
    this.chunk = this.spare ?? new Chunk();
    this.spare = null;
    const batches = formBatches(c, this.strings);
    if (c.waiter) {
      c.waiter.left = batches.length;
      for (const b of batches) this.waiting.set(b, c.waiter);
      if (batches.length === 0) c.waiter.resolve();
    }
    for (const b of batches) this.push(b);
    c.n = 0;
    c.miss = null;
    c.waiter = null;
    this.spare = c;
    if (this.strings.length > INTERN_CAP) {
      this.strings = [];
      this.ids.clear();
      this.generation++;
    }
  }

  private push(b: Batch) {
    if (this.buffered === 0) this.oldest = b.at[0] as number;
    this.buffer.push(b);
    this.buffered += b.n;
  }

  // ---- the writer side ----

  /** Strict callers of these batches: durable (or, with `err`, lost). */
  private settle(batches: readonly Batch[], err?: Error) {
    if (this.waiting.size === 0) return;
    for (const b of batches) {
      const w = this.waiting.get(b);
      if (!w) continue;
      this.waiting.delete(b);
      if (err && !w.failed) {
        w.failed = true;
        w.reject(err);
      }
      if (--w.left === 0 && !w.failed) w.resolve();
    }
  }

  async flush(): Promise<void> {
    this.seal();
    if (this.running) await this.running;
    await this.drain(true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // responses that just finished record their events in a deferred hook: let them land first
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.seal();
    this.disarm();
    if (this.spillTimer) clearTimeout(this.spillTimer);
    this.spillTimer = null;
    if (this.running) await this.running;
    await this.drain(true);
    this.closed = true;
    this.disarm();
    // the store is down: keep the rest on disk for the next start
    this.spillRetryAt = 0;
    if (this.buffered > 0) this.spillBuffer("unwritten at close");
    // neither the store nor a new file takes them (a full disk): into the space set aside
    if (this.buffered > 0) this.keepInReserve();
    if (this.buffered > 0) {
      const rest = this.buffer.splice(0);
      this.buffered = 0;
      this.drop(rest, "usage events lost at close");
    }
    this.closeSpill();
    const s = this.stats();
    log(s.dropped > 0 ? "error" : "info", "usage recorder closed", { ...s });
  }

  /** The held batches, oldest first, into the reserve (a spill file for the next start). */
  private keepInReserve() {
    const kept = this.reserve.keep(this.buffer);
    if (kept === 0) return;
    const done = this.buffer.splice(0, kept);
    const events = done.reduce((n, b) => n + b.n, 0);
    this.buffered -= events;
    this.settle(done);
    this.reserved = false;
    this.counters.spilled += events;
    log("warn", "usage events kept in the spill reserve for the next start", {
      events,
      left: this.buffered,
    });
  }

  /** Degraded while events pile up in memory past `maxBuffered`, until a write succeeds. */
  condition(): RecorderCondition {
    return {
      state: this.degradedSince === null ? "ok" : "degraded",
      since: this.degradedSince === null ? null : new Date(this.degradedSince).toISOString(),
      held: this.buffered + this.chunk.n,
      backlog: {
        spillFiles: this.spillPending ? spillFiles(this.opts.spillDir).length : 0,
        spillBytes: this.spillSize,
        replaying: this.replaying,
        pendingBatches: this.store.backlog?.().pendingBatches ?? 0,
      },
    };
  }

  /** false once `onFull` is `refuse` and memory holds `maxHeld` events nothing takes */
  accepting(): boolean {
    return this.opts.onFull !== "refuse" || this.buffered + this.chunk.n < this.maxHeld;
  }

  stats(): RecorderStats {
    return {
      ...this.counters,
      buffered: this.buffered + this.chunk.n,
      failures: this.totalFailures,
      spillBytes: this.spillSize,
      spillFiles: this.spillPending ? spillFiles(this.opts.spillDir).length : 0,
    };
  }

  private arm(ms: number) {
    this.disarm();
    this.armedMs = ms;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedMs = -1;
      this.seal();
      void this.drain(false);
    }, ms);
  }

  private disarm() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedMs = -1;
  }

  /**
   * Write what is buffered when the drain starts (with `all`, also whatever arrives meanwhile),
   * APPEND_CAP events per append, then replay spill files. One drain at a time; a failure arms
   * the backoff timer. Events recorded during the drain get their own window.
   */
  private drain(all: boolean): Promise<void> {
    if (this.running) return this.running;
    this.running = this.drainNow(all).finally(() => {
      this.running = null;
      if (this.closed || this.failures > 0 || this.timer) return;
      if (this.chunk.n >= this.opts.flushEvents || this.buffered > 0) this.arm(0);
      else if (this.chunk.n > 0) this.arm(this.strict ? 0 : this.opts.flushMs);
      else if (this.spillPending) this.arm(0);
    });
    return this.running;
  }

  private async drainNow(all: boolean) {
    try {
      // a retry while spilling: the spill file (older events) is replayed with the others
      if (this.failures > 0 && this.spill) this.rotateSpill();
      let due = this.buffered;
      while (this.buffer.length > 0 && (all || due > 0)) {
        const batch: Batch[] = [];
        let events = 0;
        while (this.buffer.length > 0 && events + (this.buffer[0] as Batch).n <= APPEND_CAP) {
          const b = this.buffer.shift() as Batch;
          batch.push(b);
          events += b.n;
        }
        this.buffered -= events;
        this.oldest =
          this.buffer.length > 0
            ? ((this.buffer[0] as Batch).at[0] as number)
            : Number.POSITIVE_INFINITY;
        try {
          await this.store.append(batch);
        } catch (err) {
          this.buffer.unshift(...batch);
          this.buffered += events;
          this.oldest = (batch[0] as Batch).at[0] as number;
          throw err;
        }
        due -= events;
        this.counters.written += events;
        this.settle(batch);
        this.recovered();
        if (all) this.seal();
      }
      // spill files (older events, in the background): one file per drain, live batches first
      if (this.failures === 0 && this.spill) this.rotateSpill();
      if (this.spillPending && !this.closed) await this.replayOne();
    } catch (err) {
      this.failed(err);
    }
  }

  /** After a write the store took: leave the failure state (and the degraded one). */
  private recovered() {
    if (this.failures > 0) {
      log("info", "usage event store is back; writing buffered events", {
        after: this.failures,
        buffered: this.buffered,
      });
      this.failures = 0;
    }
    if (this.degradedSince !== null) {
      log("info", "usage events are written again; recorder ready", {
        degradedForMs: Date.now() - this.degradedSince,
        held: this.buffered,
      });
      this.degradedSince = null;
    }
    if (!this.reserved && !this.closed) this.reserved = this.reserve.ensure();
  }

  /** Close the spill file being written so a drain replays it. */
  private rotateSpill() {
    if (this.spill) {
      this.closeSpill();
      this.spillPending = true;
    }
  }

  private failed(err: unknown) {
    this.failures++;
    this.totalFailures++;
    const exp = Math.min(this.backoffMax, this.backoffMin * 2 ** Math.min(20, this.failures - 1));
    const delay = Math.round(exp * (0.5 + Math.random() * 0.5));
    log(this.failures === 1 ? "warn" : "debug", "usage event store write failed; retrying", {
      attempt: this.failures,
      retryInMs: delay,
      buffered: this.buffered,
      error: (err as Error).message,
    });
    // the store is down: what is buffered goes to disk now (a crash meanwhile loses nothing)
    if (this.buffered > 0) this.spillBuffer("event store down");
    if (!this.closed) this.arm(delay);
  }

  /**
   * Move the whole buffer to the spill file (by default: it is full). When the spill file
   * cannot be written either, the batches stay in memory (see `held`).
   */
  private spillBuffer(reason = "buffer full: event store down or slower than traffic") {
    if (Date.now() < this.spillRetryAt) return this.held();
    const batches = this.buffer;
    this.buffer = [];
    const events = this.buffered;
    this.buffered = 0;
    this.oldest = Number.POSITIVE_INFINITY;
    if (this.spillBatches(batches, reason)) return;
    this.buffer = batches.concat(this.buffer);
    this.buffered += events;
    this.oldest = (this.buffer[0]?.at[0] as number | undefined) ?? Number.POSITIVE_INFINITY;
    this.spillRetryAt = Date.now() + 1000;
    this.held();
  }

  /** Events stay in memory, neither written nor spilled: degraded past `maxBuffered`. */
  private held() {
    if (this.buffered > this.maxBuffered && this.degradedSince === null) {
      this.degradedSince = Date.now();
      log("error", "usage events held in memory: neither the store nor the spill file takes them", {
        held: this.buffered,
        maxHeld: this.maxHeld,
        onFull: this.opts.onFull ?? "serve",
      });
    }
  }

  private drop(batches: readonly Batch[], msg: string) {
    const n = batches.reduce((s, b) => s + b.n, 0);
    this.settle(batches, new Error(msg));
    this.counters.dropped += n;
    this.dropped(msg, n);
  }

  /** The first drop of a spell is logged; then one line per 1,000. */
  private dropped(msg: string, n: number) {
    if (
      this.counters.dropped === n ||
      Math.floor(this.counters.dropped / 1000) > Math.floor((this.counters.dropped - n) / 1000)
    )
      log("error", msg, { dropped: n, droppedTotal: this.counters.dropped });
  }

  /** Append `batches` to the spill file; false when it cannot be written (or spills are full). */
  private spillBatches(batches: readonly Batch[], reason: string): boolean {
    if (batches.length === 0) return true;
    try {
      if (this.spillSize >= this.spillMax)
        throw new Error(`spill files hold ${this.spillSize} bytes, USAGE_SPILL_MAX_MB reached`);
      if (!this.spill) {
        this.spill = new SpillFile(join(this.opts.spillDir, spillName()));
        log("warn", "spilling usage events to disk", {
          reason,
          storeFailing: this.failures > 0,
          file: this.spill.path,
        });
      }
      const before = this.spill.bytes;
      this.spill.append(batches);
      this.spillSize += this.spill.bytes - before;
      this.counters.spilled += batches.reduce((n, b) => n + b.n, 0);
      this.settle(batches);
      return true;
    } catch (err) {
      if (Date.now() >= this.spillRetryAt)
        log("error", "usage events cannot be spilled: spill file not writable", {
          batches: batches.length,
          error: (err as Error).message,
        });
      // a file that could not be written is not kept open: the next attempt opens a new one
      this.closeSpill();
      return false;
    }
  }

  private closeSpill() {
    this.spill?.close();
    this.spill = null;
  }

  /**
   * Replay the oldest closed spill file into the store (APPEND_CAP events per append), then
   * delete it; `spillPending` is cleared when no closed file is left. One file per drain, so
   * live batches wait at most one file's replay.
   */
  private async replayOne() {
    const names = spillFiles(this.opts.spillDir).filter(
      (name) => join(this.opts.spillDir, name) !== this.spill?.path,
    );
    const name = names[0];
    if (name === undefined) {
      this.spillPending = false;
      this.replaying = false;
      return;
    }
    this.replaying = true;
    const path = join(this.opts.spillDir, name);
    const batches = await spilledBatches(path, this.store);
    let events = 0;
    for (let i = 0; i < batches.length; ) {
      const part: Batch[] = [];
      let n = 0;
      while (i < batches.length && n + (batches[i] as Batch).n <= APPEND_CAP) {
        n += (batches[i] as Batch).n;
        part.push(batches[i++] as Batch);
      }
      if (part.length === 0) part.push(batches[i++] as Batch);
      await this.store.append(part);
      events += n;
      this.recovered();
    }
    let size = 0;
    try {
      size = statSync(path).size;
    } catch {}
    unlinkSync(path);
    this.spillSize = Math.max(0, this.spillSize - size);
    this.counters.replayed += events;
    log("info", "replayed spilled usage events", { file: path, events });
    if (names.length === 1) {
      this.spillPending = false;
      this.replaying = false;
    }
  }
}

/**
 * A chunk's records as batches: 429 refusals folded (the first refusal of each account, key,
 * bucket and second stands for all of them, with `count`), then per account and UTC day, by
 * time, each with the strings it uses, numbered.
 */
export function formBatches(c: Chunk, strings: readonly string[]): Batch[] {
  const n = c.n;
  const f = c.f;
  let count: Uint32Array | null = null;
  let skip: Uint8Array | null = null;
  const folds = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    if (f[i * F + F_STATUS] !== 429) continue;
    const o = i * F;
    const k = `${f[o + F_ACCOUNT]},${f[o + F_KEY]},${f[o + F_BUCKET]},${Math.floor((c.at[i] as number) / 1000)}`;
    const first = folds.get(k);
    if (first === undefined) folds.set(k, i);
    else {
      count ??= new Uint32Array(n).fill(1);
      skip ??= new Uint8Array(n);
      count[first] = (count[first] as number) + 1;
      skip[i] = 1;
    }
  }
  const groups = new Map<number, Map<number, number[]>>();
  for (let i = 0; i < n; i++) {
    if (skip?.[i]) continue;
    const a = f[i * F + F_ACCOUNT] as number;
    const d = dayNo(c.at[i] as number);
    let days = groups.get(a);
    if (!days) {
      days = new Map();
      groups.set(a, days);
    }
    let list = days.get(d);
    if (!list) {
      list = [];
      days.set(d, list);
    }
    list.push(i);
  }
  const out: Batch[] = [];
  const local = new Map<number, number>();
  for (const [a, days] of groups)
    for (const list of days.values()) {
      list.sort((x, y) => (c.at[x] as number) - (c.at[y] as number));
      for (let start = 0; start < list.length; start += MAX_BATCH_EVENTS) {
        const part = list.slice(start, start + MAX_BATCH_EVENTS);
        const b = emptyBatch(strings[a] as string, part.length);
        local.clear();
        const own = (id: number): number => {
          if (id === NONE) return NONE;
          let j = local.get(id);
          if (j === undefined) {
            j = b.strings.length;
            b.strings.push(strings[id] as string);
            local.set(id, j);
          }
          return j;
        };
        let counted = false;
        for (let k = 0; k < part.length; k++) {
          const i = part[k] as number;
          const o = i * F;
          b.at[k] = c.at[i] as number;
          b.key[k] = own(f[o + F_KEY] as number);
          b.tier[k] = own(f[o + F_TIER] as number);
          b.route[k] = own(f[o + F_ROUTE] as number);
          b.slug[k] = own(f[o + F_SLUG] as number);
          b.variant[k] = own(f[o + F_VARIANT] as number);
          b.format[k] = own(f[o + F_FORMAT] as number);
          b.bucket[k] = f[o + F_BUCKET] as number;
          b.status[k] = f[o + F_STATUS] as number;
          b.lat[k] = c.lat[i] as number;
          if (count && count[i] !== 1) counted = true;
          const miss = c.miss?.get(i);
          if (miss) {
            b.miss ??= new Array(part.length).fill(null);
            b.miss[k] = miss.map((m) => {
              const j = b.strings.length;
              b.strings.push(m);
              return j;
            });
          }
        }
        if (counted && count)
          b.count = Uint32Array.from(part, (i) => (count as Uint32Array)[i] as number);
        b.t0 = b.at[0] as number;
        b.q = mintQ();
        out.push(b);
      }
    }
  return out;
}
