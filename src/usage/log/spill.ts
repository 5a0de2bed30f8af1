import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { utcDay } from "../../platform/day";
import { log } from "../../platform/log";
import { isUsageEvent } from "../daily";
import type { UsageEvent } from "../event";
import { type Batch, batchesOfEvents, decodeFrames, encodeFrames, eventsOf } from "./batch";
import type { UsageLog } from "./port";

/**
 * Spill files: batches the store did not take (down, or slower than the traffic), kept on disk
 * until they are replayed. `DATA_DIR/spill/usage-<time>-<pid>-<rand>.spill`: frames of batches
 * (batch.ts encodeFrames: length, CRC-32, bytes), fdatasync'd per write, so a file cut short by a
 * crash keeps its whole frames. Files of earlier versions (`.jsonl`, one event per line) are
 * read too, their events batched with their ids.
 */

export const SPILL_FILE = /^usage-.*\.(spill|jsonl)$/;

/** A new spill file's name: sorts by time, unique across processes. */
export function spillName(tag = ""): string {
  const time = new Date().toISOString().replace(/[:.]/g, "-");
  const rand = Math.floor(Math.random() * 2 ** 32)
    .toString(16)
    .padStart(8, "0");
  return `usage-${time}-${process.pid}-${tag}${rand}.spill`;
}

/** The spill files in `dir`, oldest first. */
export function spillFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => SPILL_FILE.test(f))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The batches of a spill file still to be written: of a file of frames, all of them (their ids
 * make a replay exactly-once); of an earlier version's JSONL file, its events the log does not
 * hold yet (that version named each event by its own id, and may have stored some of them before
 * it spilled them: they are looked for among the log's events of their account and day).
 */
export async function spilledBatches(
  path: string,
  log: Pick<UsageLog, "events">,
): Promise<Batch[]> {
  const batches = readSpill(path);
  if (!path.endsWith(".jsonl")) return batches;
  const held = new Set<string>();
  const seen = new Set<string>();
  for (const b of batches) {
    const day = utcDay(b.t0);
    const k = `${b.account}\u0000${day}`;
    if (seen.has(k)) continue;
    seen.add(k);
    for await (const x of log.events(b.account, day, day))
      for (const id of x.ids ?? []) held.add(id);
  }
  if (held.size === 0) return batches;
  const left = batches.flatMap((b) => eventsOf(b)).filter((e) => !held.has(e.id));
  return batchesOfEvents(left);
}

/** The batches of a spill file (a torn tail skipped with a warning). */
export function readSpill(path: string): Batch[] {
  if (path.endsWith(".jsonl")) {
    const events: UsageEvent[] = [];
    const ids = new Set<string>();
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      let e: unknown;
      try {
        e = JSON.parse(line);
      } catch {}
      if (isUsageEvent(e) && !ids.has(e.id)) {
        ids.add(e.id);
        events.push(e);
      } else if (!isUsageEvent(e))
        log("warn", "skipped an unreadable usage event line", { file: path });
    }
    return batchesOfEvents(events);
  }
  const bytes = readFileSync(path);
  const { batches, whole } = decodeFrames(bytes);
  if (!whole) log("warn", "usage spill file cut short: its whole batches are read", { file: path });
  return batches;
}

/** An append-only spill file: each `append` written and fdatasync'd before it returns. */
export class SpillFile {
  private fd: number | null = null;
  bytes = 0;
  constructor(readonly path: string) {}

  append(batches: readonly Batch[]): void {
    const frames = encodeFrames(batches);
    this.fd ??= openSync(this.path, "a");
    const before = fstatSync(this.fd).size;
    try {
      for (let off = 0; off < frames.length; )
        off += writeSync(this.fd, frames, off, frames.length - off);
      fdatasyncSync(this.fd);
    } catch (err) {
      // leave the file as it was: a short write would tear the next frame
      try {
        ftruncateSync(this.fd, before);
      } catch {}
      throw err;
    }
    this.bytes += frames.length;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** The bytes of every spill file in `dir`. */
export function spillBytes(dir: string): number {
  let n = 0;
  for (const f of spillFiles(dir))
    try {
      n += statSync(join(dir, f)).size;
    } catch {}
  return n;
}

const CHUNK = 1 << 20;

/**
 * Disk space set aside for the batches a stopping process could neither write nor spill (a full
 * disk): a file of zeros, `bytes` long, made while there is space. Its blocks are already the
 * file's, so overwriting them needs no free space. At shutdown `keep` writes the batches over the
 * zeros (frames end at the first zero), cuts the file to their length and renames it to a spill
 * file, which the next start replays like any other; a new reserve is made once there is space.
 *
 * Holds on file systems that overwrite in place (ext4, xfs, tmpfs); a copy-on-write one (btrfs,
 * zfs) may need new blocks for the overwrite, and then the events are lost as before.
 */
export class SpillReserve {
  readonly path: string;
  /** no attempt to make the reserve before this time (epoch ms): the last one failed */
  private retryAt = 0;

  constructor(
    private dir: string,
    private bytes: number,
  ) {
    this.path = join(dir, "reserve");
  }

  /** The reserve is there and of full size (made now when missing, at most once a minute). */
  ensure(): boolean {
    if (this.bytes <= 0) return false;
    this.recover();
    if (existsSync(this.path) && statSync(this.path).size >= this.bytes) return true;
    if (Date.now() < this.retryAt) return false;
    let fd: number | null = null;
    try {
      fd = openSync(this.path, "w");
      const zeros = Buffer.alloc(Math.min(CHUNK, this.bytes));
      for (let off = 0; off < this.bytes; )
        off += writeSync(fd, zeros, 0, Math.min(zeros.length, this.bytes - off), off);
      return true;
    } catch (err) {
      this.retryAt = Date.now() + 60_000;
      log("warn", "no disk space for the usage spill reserve; retrying later", {
        file: this.path,
        bytes: this.bytes,
        error: (err as Error).message,
      });
      if (fd !== null) closeSync(fd);
      fd = null;
      try {
        unlinkSync(this.path);
      } catch {}
      return false;
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /**
   * Write `batches` (oldest first) into the reserve and turn it into a spill file. Returns how
   * many batches were kept: those that fit, none when there is no reserve or the write fails.
   */
  keep(batches: readonly Batch[]): number {
    if (!existsSync(this.path)) return 0;
    const size = statSync(this.path).size;
    const parts: Uint8Array[] = [];
    let length = 0;
    for (const b of batches) {
      const frame = encodeFrames([b]);
      if (length + frame.length > size) break;
      parts.push(frame);
      length += frame.length;
    }
    const kept = parts.length;
    if (kept === 0) return 0;
    const frames = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      frames.set(p, at);
      at += p.length;
    }
    let fd: number | null = null;
    try {
      fd = openSync(this.path, "r+");
      for (let off = 0; off < frames.length; )
        off += writeSync(fd, frames, off, frames.length - off, off);
      ftruncateSync(fd, frames.length);
      fdatasyncSync(fd);
      closeSync(fd);
      fd = null;
      renameSync(this.path, join(this.dir, spillName("reserve-")));
      return kept;
    } catch (err) {
      log("error", "usage events could not be kept in the spill reserve", {
        file: this.path,
        batches: kept,
        error: (err as Error).message,
      });
      return 0;
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /**
   * A reserve that holds batches (a process stopped between writing and renaming it): cut after
   * its whole frames and turned into a spill file, so they are replayed.
   */
  private recover() {
    if (!existsSync(this.path)) return;
    const fd = openSync(this.path, "r+");
    try {
      const head = Buffer.alloc(1);
      if (readSync(fd, head, 0, 1, 0) === 0 || head[0] === 0) return;
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(size);
      readSync(fd, buf, 0, size, 0);
      ftruncateSync(fd, decodeFrames(buf).end);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(this.path, join(this.dir, spillName("reserve-")));
  }
}
