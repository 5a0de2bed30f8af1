import { mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../platform/ids";
import { JsonlLog } from "../platform/jsonl";
import { log } from "../platform/log";
import { isUsageEvent } from "./daily";
import type { UsageEvent, UsageEventStore, UsageInput, UsageRecorder } from "./port";
import type { RecorderCondition } from "./recorder-condition";
import { SpillReserve } from "./reserve";
import { eventOf } from "./serialize";

export interface WriterOptions {
  /** flush at most this long after the first buffered event (USAGE_FLUSH_MS) */
  flushMs: number;
  /** flush as soon as this many events are buffered; also the batch size (USAGE_FLUSH_EVENTS) */
  flushEvents: number;
  /** where events go when the store stays down past `maxBuffered` (DATA_DIR/spill) */
  spillDir: string;
  /** events held in memory while the store is down; default max(10,000, 20 × flushEvents) */
  maxBuffered?: number;
  /**
   * the writer is behind when a buffered event is older than this while a write runs or the
   * store is down: the buffer then goes to a spill file at once, so a crash (kill -9) loses at
   * most this much recent traffic (plus the batch being written). Default 2 × flushMs.
   */
  maxLagMs?: number;
  /**
   * most events held in memory when they can be neither written nor spilled (a full disk);
   * default 5 × maxBuffered. Past it `onFull` decides.
   */
  maxHeld?: number;
  /**
   * past `maxHeld` (USAGE_ON_STORE_FULL): `serve` drops further events (counted in `dropped`),
   * `refuse` makes `accepting()` false so metered requests are refused before they are served
   */
  onFull?: "serve" | "refuse";
  /**
   * disk set aside (DATA_DIR/spill/reserve) for the events held in memory at shutdown when
   * neither the store nor a spill file takes them; default 320 bytes × maxHeld. 0: none
   */
  reserveBytes?: number;
  /**
   * USAGE_DURABILITY. `batched`: `record` returns at once, a crash may lose the last moments of
   * events (the loss bound in docs/usage-events.md). `strict`: `record` returns a promise that
   * settles once the event is durable (written by a store append that synced, or in a spill
   * file), and a batch is written as soon as no write runs (group commit): the caller
   * acknowledges the request after it.
   */
  durability?: "batched" | "strict";
  /** retry delay after a failed write: doubles from min to max, with jitter */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

export interface WriterStats {
  recorded: number;
  written: number;
  buffered: number;
  spilled: number;
  replayed: number;
  dropped: number;
  failures: number;
}

const SPILL_FILE = /^usage-.*\.jsonl$/;

/** When a buffered entry was metered (epoch ms). */
const timeOf = (x: UsageEvent | UsageInput): number =>
  (x as UsageInput).at ?? Date.parse((x as UsageEvent).ts);

type Entry = UsageEvent | UsageInput;

/** A strict caller waiting for its event to be durable. */
interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Buffered entries as events, in place: an input becomes its event (id, ts, day) when it first
 * leaves the buffer, so a batch that goes back for a retry keeps its ids. A strict caller's
 * wait moves with its entry.
 */
function materialize(list: Entry[], waiting: Map<Entry, Waiter>): UsageEvent[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i] as Entry;
    if ((x as UsageEvent).id !== undefined) continue;
    const e = eventOf(x as UsageInput);
    list[i] = e;
    const w = waiting.size > 0 ? waiting.get(x) : undefined;
    if (w) {
      waiting.delete(x);
      waiting.set(e, w);
    }
  }
  return list as UsageEvent[];
}

/**
 * The usage recorder: `record` only buffers the input; its event (UUIDv7 id, ts, UTC day) is
 * made when the batch is written (`eventOf`). A request never waits on the event store. Batches
 * are written when `flushEvents` are buffered or `flushMs` after the first one, whichever comes
 * first, one write at a time.
 *
 * When a write fails the batch goes back to the front of the buffer and is retried with
 * exponential backoff. Past `maxBuffered` the buffer is spilled to a JSONL file in
 * `spillDir` (fdatasync'd); spill files are replayed into the store when a write succeeds
 * again and at start (event ids make the replay idempotent).
 *
 * When the spill file cannot be written either (a full disk), events stay in memory (spilling is
 * retried at most once a second) up to `maxHeld`. Past `maxBuffered` held that way the recorder
 * is degraded (`condition()`: readiness says not ready) until a write to the store succeeds
 * again. Past `maxHeld`, `onFull` decides: `serve` drops further events (counted in `dropped`,
 * logged as errors), `refuse` stops accepting (`accepting()`), so no request is served
 * without its event.
 */
export class BatchingRecorder implements UsageRecorder {
  /** inputs as recorded, and events of batches that go back for a retry */
  private buffer: (UsageEvent | UsageInput)[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** delay the armed timer was set for (0: a full batch is waiting), -1 when none */
  private armedMs = -1;
  private running: Promise<void> | null = null;
  /** consecutive failed writes; > 0 means the store is considered down */
  private failures = 0;
  private spill: JsonlLog<UsageEvent> | null = null;
  private spillPending = false;
  private closed = false;
  private readonly maxBuffered: number;
  private readonly maxLag: number;
  private readonly backoffMin: number;
  private readonly backoffMax: number;
  private readonly counters = { recorded: 0, written: 0, spilled: 0, replayed: 0, dropped: 0 };
  /** 429 refusals of the current second, one entry per key and bucket (count = refusals) */
  private folds = new Map<string, UsageInput>();
  private foldSecond = -1;
  private foldTimer: ReturnType<typeof setTimeout> | null = null;
  private totalFailures = 0;
  private readonly maxHeld: number;
  /** no spill attempt before this time (epoch ms): the last one failed */
  private spillRetryAt = 0;
  /** since when events pile up in memory (neither written nor spilled); null when not */
  private degradedSince: number | null = null;
  private readonly reserve: SpillReserve;
  readonly strict: boolean;
  /** strict: the callers waiting for their entry (input or event) to be durable */
  private readonly waiting = new Map<Entry, Waiter>();
  /** the reserve file is there (made at start, or again once a write succeeds) */
  private reserved: boolean;

  constructor(
    private store: UsageEventStore,
    private opts: WriterOptions,
  ) {
    this.strict = opts.durability === "strict";
    this.maxBuffered = opts.maxBuffered ?? Math.max(10_000, 20 * opts.flushEvents);
    this.maxLag = opts.maxLagMs ?? 2 * opts.flushMs;
    this.maxHeld = opts.maxHeld ?? 5 * this.maxBuffered;
    this.backoffMin = opts.backoffMinMs ?? 100;
    this.backoffMax = opts.backoffMaxMs ?? 30_000;
    mkdirSync(opts.spillDir, { recursive: true });
    this.reserve = new SpillReserve(opts.spillDir, opts.reserveBytes ?? 320 * this.maxHeld, () =>
      this.spillName("reserve-"),
    );
    // first: a reserve a stopped process filled becomes a spill file, replayed below
    this.reserved = this.reserve.ensure();
    // spill files left by an earlier process are replayed on the first write attempt
    if (this.spillFiles().length > 0) {
      this.spillPending = true;
      this.arm(0);
    }
  }

  /**
   * Buffer the event. Strict: resolves once it is durable, rejects when it is dropped (429
   * refusals are folded and never waited for: they consume no quota).
   */
  record(input: UsageInput): undefined | Promise<void> {
    this.counters.recorded++;
    if (input.status === 429 && !this.closed) {
      this.fold(input);
      return;
    }
    if (!this.strict) {
      this.push(input);
      return;
    }
    const durable = new Promise<void>((resolve, reject) =>
      this.waiting.set(input, { resolve, reject }),
    );
    this.push(input);
    return durable;
  }

  /** Strict callers of these entries: durable (or, with `err`, lost). */
  private settle(entries: Entry[], err?: Error) {
    if (this.waiting.size === 0) return;
    for (const x of entries) {
      const w = this.waiting.get(x);
      if (!w) continue;
      this.waiting.delete(x);
      if (err) w.reject(err);
      else w.resolve();
    }
  }

  /**
   * 429 refusals are folded per key, bucket and second before they reach the log (a capped key
   * hammering the API wrote one event per refusal: 185 MB in 15 s from four free keys). The
   * folded event is the second's first refusal with `count`; it is buffered when the second
   * ends (a later refusal, or a timer one second on), and at flush and close.
   */
  private fold(input: UsageInput) {
    const second = Math.floor(input.at / 1000);
    if (second !== this.foldSecond) {
      this.releaseFolds();
      this.foldSecond = second;
    }
    const key = `${input.accountId}\u0000${input.keyId}\u0000${input.bucket}`;
    const held = this.folds.get(key);
    if (held) held.count = (held.count ?? 1) + 1;
    else {
      this.folds.set(key, { ...input, count: 1 });
      if (!this.foldTimer) {
        this.foldTimer = setTimeout(() => {
          this.foldTimer = null;
          this.releaseFolds();
        }, 1000);
        this.foldTimer.unref?.();
      }
    }
  }

  /** Buffer the folded refusals (each as one event). */
  private releaseFolds() {
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    if (this.folds.size === 0) return;
    const held = [...this.folds.values()];
    this.folds.clear();
    for (const input of held) this.push(input);
  }

  private push(input: UsageInput): void {
    if (this.closed) {
      // after close (a response that finished late): straight to the spill file
      const late = materialize([input], this.waiting);
      if (!this.spillEvents(late, "recorded after close"))
        this.drop(late, "usage event recorded after close lost: spill file not writable");
      this.closeSpill();
      return;
    }
    if (this.buffer.length >= this.maxHeld) {
      // nothing takes events (store and disk failing) and memory is at its bound
      this.drop([input], "usage events dropped: the store and the spill file fail, memory is full");
      return;
    }
    this.buffer.push(input);
    if (this.buffer.length > this.maxBuffered) this.spillBuffer();
    // a running write re-arms when it ends; a down store is retried by the backoff timer
    if (this.running || this.failures > 0) {
      // behind (or down): events older than maxLag go to disk now, so a crash loses little
      if (input.at - timeOf(this.buffer[0] ?? input) > this.maxLag)
        this.spillBuffer("writer behind: events older than the lag bound");
      // a down store found nothing to write on its last try: this event is the next probe
      if (this.failures > 0 && !this.running && !this.timer) this.arm(this.backoffMin);
      return;
    }
    // strict: group commit, a write starts as soon as none runs
    if (this.strict || this.buffer.length >= this.opts.flushEvents) {
      if (this.armedMs !== 0) this.arm(0);
    } else if (!this.timer) this.arm(this.opts.flushMs);
  }

  /** Write everything buffered now (one attempt; a failure arms the backoff as usual). */
  async flush(): Promise<void> {
    this.releaseFolds();
    if (this.running) await this.running;
    await this.drain(true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // responses that just finished record their events in a deferred hook: let them land first
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.releaseFolds();
    this.disarm();
    if (this.running) await this.running;
    await this.drain(true);
    this.closed = true;
    this.disarm();
    // the store is down: keep the rest on disk for the next start
    this.spillRetryAt = 0;
    if (this.buffer.length > 0) this.spillBuffer("unwritten at close");
    // neither the store nor a new file takes them (a full disk): into the space set aside
    if (this.buffer.length > 0) this.keepInReserve();
    if (this.buffer.length > 0) this.drop(this.buffer.splice(0), "usage events lost at close");
    this.closeSpill();
    const s = this.stats();
    log(s.dropped > 0 ? "error" : "info", "usage recorder closed", { ...s });
  }

  /** The held events, oldest first, into the reserve (a spill file for the next start). */
  private keepInReserve() {
    const events = materialize(this.buffer, this.waiting);
    const kept = this.reserve.keep(events);
    this.settle(events.slice(0, kept));
    this.buffer = events.slice(kept);
    if (kept === 0) return;
    this.reserved = false;
    this.counters.spilled += kept;
    log("warn", "usage events kept in the spill reserve for the next start", {
      events: kept,
      left: this.buffer.length,
    });
  }

  /** Degraded while events pile up in memory past `maxBuffered`, until a write succeeds. */
  condition(): RecorderCondition {
    return {
      state: this.degradedSince === null ? "ok" : "degraded",
      since: this.degradedSince === null ? null : new Date(this.degradedSince).toISOString(),
      held: this.buffer.length,
    };
  }

  /** false once `onFull` is `refuse` and memory holds `maxHeld` events nothing takes */
  accepting(): boolean {
    return this.opts.onFull !== "refuse" || this.buffer.length < this.maxHeld;
  }

  stats(): WriterStats {
    return { ...this.counters, buffered: this.buffer.length, failures: this.totalFailures };
  }

  private arm(ms: number) {
    this.disarm();
    this.armedMs = ms;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedMs = -1;
      void this.drain(false);
    }, ms);
  }

  private disarm() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedMs = -1;
  }

  /**
   * Write what is buffered when the drain starts, in batches of `flushEvents` (with `all`,
   * also whatever arrives meanwhile). One drain at a time; a failure arms the backoff timer.
   * Events that arrived during the drain get their own window (or an immediate drain when a
   * full batch is waiting).
   */
  private drain(all: boolean): Promise<void> {
    if (this.running) return this.running;
    this.running = this.drainNow(all).finally(() => {
      this.running = null;
      if (this.closed || this.failures > 0 || this.timer) return;
      if (this.buffer.length >= this.opts.flushEvents || this.spillPending) this.arm(0);
      else if (this.buffer.length > 0) this.arm(this.strict ? 0 : this.opts.flushMs);
    });
    return this.running;
  }

  private async drainNow(all: boolean) {
    try {
      // a retry while spilling: the spill file (older events) goes first and doubles as the probe
      if (this.failures > 0 && this.spill) {
        this.closeSpill();
        this.spillPending = true;
      }
      // spill files first (older events), then the buffer; again while new files appear (a
      // writer that fell behind spilled during this drain): none waits for the next start
      for (;;) {
        if (this.spillPending) await this.replaySpill();
        let due = this.buffer.length;
        while (this.buffer.length > 0 && (all || due > 0)) {
          const batch = materialize(
            this.buffer.splice(0, Math.min(this.opts.flushEvents, all ? Infinity : due)),
            this.waiting,
          );
          // after a failed write a batch may hold events the store partly took: check those
          const fresh = this.failures === 0;
          try {
            await this.store.append(batch, { fresh });
          } catch (err) {
            this.buffer.unshift(...batch);
            if (this.buffer.length > this.maxBuffered) this.spillBuffer();
            throw err;
          }
          due -= batch.length;
          this.counters.written += batch.length;
          this.settle(batch);
          this.recovered();
        }
        // a file spilled during this drain is replayed by it (nothing was claimed written)
        if (this.failures === 0 && this.spill) this.rotateSpill();
        if (!this.spillPending) break;
      }
    } catch (err) {
      this.failed(err);
    }
  }

  /**
   * After a write the store took: leave the failure state (and the degraded one), and replay
   * what was spilled meanwhile.
   */
  private recovered() {
    if (this.failures > 0) {
      log("info", "usage event store is back; writing buffered events", {
        after: this.failures,
        buffered: this.buffer.length,
      });
      this.failures = 0;
    }
    if (this.degradedSince !== null) {
      log("info", "usage events are written again; recorder ready", {
        degradedForMs: Date.now() - this.degradedSince,
        held: this.buffer.length,
      });
      this.degradedSince = null;
    }
    if (!this.reserved && !this.closed) this.reserved = this.reserve.ensure();
    this.rotateSpill();
  }

  /** Close the spill file being written so the next drain replays it. */
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
      buffered: this.buffer.length,
      error: (err as Error).message,
    });
    // the store is down: what is buffered goes to disk now (a crash meanwhile loses nothing)
    if (this.buffer.length > 0) this.spillBuffer("event store down");
    if (!this.closed) this.arm(delay);
  }

  /**
   * Move the whole buffer to the spill file (by default: it is full). When the spill file
   * cannot be written either, the events stay in memory (see `held`).
   */
  private spillBuffer(reason = "buffer full: event store down or slower than traffic") {
    if (Date.now() < this.spillRetryAt) return this.held();
    const events = materialize(this.buffer, this.waiting);
    this.buffer = [];
    if (this.spillEvents(events, reason)) return;
    this.buffer = events;
    this.spillRetryAt = Date.now() + 1000;
    this.held();
  }

  /** Events stay in memory, neither written nor spilled: degraded past `maxBuffered`. */
  private held() {
    if (this.buffer.length > this.maxBuffered && this.degradedSince === null) {
      this.degradedSince = Date.now();
      log("error", "usage events held in memory: neither the store nor the spill file takes them", {
        held: this.buffer.length,
        maxHeld: this.maxHeld,
        onFull: this.opts.onFull ?? "serve",
      });
    }
  }

  private drop(entries: Entry[], msg: string) {
    const n = entries.length;
    this.settle(entries, new Error(msg));
    this.counters.dropped += n;
    // the first drop of a spell is logged; then one line per 1,000
    if (
      this.counters.dropped === n ||
      Math.floor(this.counters.dropped / 1000) > Math.floor((this.counters.dropped - n) / 1000)
    )
      log("error", msg, { dropped: n, droppedTotal: this.counters.dropped });
  }

  /** Append `events` to the spill file; false when it cannot be written. */
  private spillEvents(events: UsageEvent[], reason: string): boolean {
    try {
      if (!this.spill) {
        this.spill = new JsonlLog<UsageEvent>(join(this.opts.spillDir, this.spillName()));
        log("warn", "spilling usage events to disk", {
          reason,
          storeFailing: this.failures > 0,
          file: this.spill.path,
        });
      }
      this.spill.append(events);
      this.counters.spilled += events.length;
      this.settle(events);
      return true;
    } catch (err) {
      if (Date.now() >= this.spillRetryAt)
        log("error", "usage events cannot be spilled: spill file not writable", {
          events: events.length,
          error: (err as Error).message,
        });
      // a file that could not be written is not kept open: the next attempt opens a new one
      this.closeSpill();
      return false;
    }
  }

  /** A new spill file's name: sorts by time, unique across processes. */
  private spillName(tag = "") {
    const time = new Date().toISOString().replace(/[:.]/g, "-");
    return `usage-${time}-${process.pid}-${tag}${newId().slice(-8)}.jsonl`;
  }

  private closeSpill() {
    this.spill?.close();
    this.spill = null;
  }

  private spillFiles(): string[] {
    try {
      return readdirSync(this.opts.spillDir)
        .filter((f) => SPILL_FILE.test(f))
        .sort();
    } catch {
      return [];
    }
  }

  /**
   * Replay closed spill files into the store, oldest first; a file is deleted once written.
   * Lists the directory again until no closed file is left, so files spilled while a replay
   * runs are replayed by it too (each once: a file is deleted right after its events are in).
   */
  private async replaySpill() {
    for (;;) {
      const names = this.spillFiles().filter(
        (name) => join(this.opts.spillDir, name) !== this.spill?.path,
      );
      // cleared only here: a replay that fails leaves it set, so the retry replays first
      if (names.length === 0) {
        this.spillPending = false;
        return;
      }
      for (const name of names) {
        const path = join(this.opts.spillDir, name);
        const events = new JsonlLog<unknown>(path).readAll().filter(isUsageEvent);
        for (let i = 0; i < events.length; i += this.opts.flushEvents) {
          await this.store.append(events.slice(i, i + this.opts.flushEvents));
          this.recovered();
        }
        unlinkSync(path);
        this.counters.replayed += events.length;
        log("info", "replayed spilled usage events", { file: path, events: events.length });
      }
    }
  }
}
