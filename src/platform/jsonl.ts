import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  write,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { log } from "./log";

/**
 * An append-only JSONL file. `append` returns once the lines are written and fdatasync'd, so
 * whatever a caller acknowledged survives a crash; one that fails (a full disk) throws and leaves
 * the file as it was. `readAll` skips a torn last line (from a
 * crash mid-write) with a warning instead of failing.
 */
export class JsonlLog<T> {
  private fd: number | null = null;
  /** bytes of the file consumed by readAll/readNew (complete lines only) */
  private offset = 0;

  constructor(readonly path: string) {}

  readAll(): T[] {
    if (!existsSync(this.path)) return [];
    const text = readFileSync(this.path, "utf8");
    this.offset = Buffer.byteLength(text);
    const out: T[] = [];
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      try {
        out.push(JSON.parse(line) as T);
      } catch {
        log("warn", "skipping unreadable line in event log", {
          file: this.path,
          line: i + 1,
          torn: i >= lines.length - 2,
        });
      }
    });
    // a torn tail has no newline: start the next append on a fresh line
    if (text.length > 0 && !text.endsWith("\n")) this.write("\n");
    return out;
  }

  /**
   * Complete lines appended since the last read (by this or another process, e.g. the admin
   * CLI). Records this process appended itself come back too: callers dedupe by id.
   */
  readNew(): T[] {
    if (!existsSync(this.path)) return [];
    const size = statSync(this.path).size;
    if (size <= this.offset) return [];
    const fd = openSync(this.path, "r");
    try {
      const buf = Buffer.alloc(size - this.offset);
      readSync(fd, buf, 0, buf.length, this.offset);
      const end = buf.lastIndexOf(0x0a);
      if (end < 0) return [];
      this.offset += end + 1;
      const out: T[] = [];
      for (const line of buf.subarray(0, end).toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        try {
          out.push(JSON.parse(line) as T);
        } catch {
          log("warn", "skipping unreadable line in event log", { file: this.path });
        }
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  append(records: T[]): void {
    if (records.length === 0) return;
    this.write(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }

  /** appends in flight (appendAsync), in call order */
  private pending: Promise<void> = Promise.resolve();

  /**
   * append() without holding the event loop: the write and the fdatasync run on the thread
   * pool, one append after another in call order; resolves once the lines are on disk.
   */
  appendAsync(records: T[]): Promise<void> {
    if (records.length === 0) return this.pending;
    const buf = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const done = this.pending.then(() => this.writeAsync(buf));
    this.pending = done.catch(() => {});
    return done;
  }

  private async writeAsync(buf: Buffer) {
    const fd = this.open();
    let off = 0;
    while (off < buf.length) {
      off += await new Promise<number>((resolve, reject) =>
        write(fd, buf, off, buf.length - off, null, (err, n) => (err ? reject(err) : resolve(n))),
      );
    }
    await new Promise<void>((resolve, reject) =>
      fdatasync(fd, (err) => (err ? reject(err) : resolve())),
    );
  }

  /** Waits for appends in flight, then closes the file. */
  async closeAsync(): Promise<void> {
    await this.pending;
    this.close();
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, "a");
    }
    return this.fd;
  }

  private write(text: string) {
    const fd = this.open();
    const buf = Buffer.from(text);
    const before = fstatSync(fd).size;
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off);
      fdatasyncSync(fd);
    } catch (err) {
      // a write cut short (a full disk) leaves no torn line behind: back to the last whole one
      try {
        ftruncateSync(fd, before);
      } catch {}
      throw err;
    }
  }
}
