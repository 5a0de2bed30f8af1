import {
  closeSync,
  existsSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { log } from "../../platform/log";

/**
 * An append-only JSONL file. `append` returns once the lines are written and fdatasync'd, so
 * whatever a caller acknowledged survives a crash. `readAll` skips a torn last line (from a
 * crash mid-write) with a warning instead of failing.
 */
export class JsonlLog<T> {
  private fd: number | null = null;

  constructor(readonly path: string) {}

  readAll(): T[] {
    if (!existsSync(this.path)) return [];
    const text = readFileSync(this.path, "utf8");
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

  append(records: T[]): void {
    if (records.length === 0) return;
    this.write(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private write(text: string) {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, "a");
    }
    const buf = Buffer.from(text);
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off);
    fdatasyncSync(this.fd);
  }
}
