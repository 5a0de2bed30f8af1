import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { log } from "../platform/log";
import type { UsageEvent } from "./port";

const CHUNK = 1 << 20;

/**
 * Disk space set aside for the usage events a stopping process could neither write nor spill (a
 * full disk): a file of zeros, `bytes` long, made while there is space. Its blocks are already
 * the file's, so overwriting them needs no free space. At shutdown `keep` writes the events over
 * the zeros, cuts the file to their length and renames it to a spill file (`spillName`), which
 * the next start replays like any other; a new reserve is made once there is space again.
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
    /** a fresh spill file name (matched by the writer's replay) */
    private spillName: () => string,
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
      for (let off = 0; off < this.bytes; ) {
        off += writeSync(fd, zeros, 0, Math.min(zeros.length, this.bytes - off), off);
      }
      // no fdatasync: the file system takes (or refuses) the space when the bytes are written
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
   * Write `events` (oldest first) into the reserve and turn it into a spill file. Returns how
   * many were kept: those that fit, none when there is no reserve or the write fails.
   */
  keep(events: UsageEvent[]): number {
    if (!existsSync(this.path)) return 0;
    const size = statSync(this.path).size;
    const lines: Buffer[] = [];
    let length = 0;
    for (const e of events) {
      const line = Buffer.from(`${JSON.stringify(e)}\n`);
      if (length + line.length > size) break;
      lines.push(line);
      length += line.length;
    }
    if (lines.length === 0) return 0;
    let fd: number | null = null;
    try {
      fd = openSync(this.path, "r+");
      const text = Buffer.concat(lines, length);
      for (let off = 0; off < length; ) off += writeSync(fd, text, off, length - off, off);
      ftruncateSync(fd, length);
      fdatasyncSync(fd);
      closeSync(fd);
      fd = null;
      renameSync(this.path, join(this.dir, this.spillName()));
      return lines.length;
    } catch (err) {
      log("error", "usage events could not be kept in the spill reserve", {
        file: this.path,
        events: lines.length,
        error: (err as Error).message,
      });
      return 0;
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /**
   * A reserve that holds events (a process stopped between writing and renaming it): cut at its
   * first zero byte and turned into a spill file, so they are replayed.
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
      const end = buf.indexOf(0);
      ftruncateSync(fd, end < 0 ? size : end);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(this.path, join(this.dir, this.spillName()));
  }
}
