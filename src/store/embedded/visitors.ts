import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { VisitorCountStore } from "../../visitor-counter/port";

interface State {
  total: number;
  secret: string;
}

/**
 * Embedded visitor counter: DATA_DIR/visitor-counter.json, replaced atomically (written to a
 * temporary file, fsync'd, renamed) on every change, so a crash keeps the old or the new total.
 */
export class EmbeddedVisitorStore implements VisitorCountStore {
  private path: string;
  private state: State;

  constructor(private dataDir: string) {
    this.path = join(dataDir, "visitor-counter.json");
    this.state = existsSync(this.path)
      ? (JSON.parse(readFileSync(this.path, "utf8")) as State)
      : { total: 0, secret: "" };
  }

  async total() {
    return this.state.total;
  }

  async increment() {
    this.save({ ...this.state, total: this.state.total + 1 });
    return this.state.total;
  }

  async secret() {
    if (!this.state.secret) this.save({ ...this.state, secret: randomBytes(32).toString("hex") });
    return this.state.secret;
  }

  private save(next: State) {
    mkdirSync(this.dataDir, { recursive: true });
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, JSON.stringify(next));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
    this.state = next;
  }
}
