import { randomBytes } from "node:crypto";
import type { Database } from "../../store/embedded/db";
import type { VisitorCountStore } from "./port";

/**
 * Embedded visitor counter: one row in `visitor_counter` on the shared SQLite database; an
 * increment is one UPDATE ... RETURNING, atomic across processes.
 */
export class EmbeddedVisitorStore implements VisitorCountStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS visitor_counter (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        total INTEGER NOT NULL,
        secret TEXT NOT NULL
      );
    `);
  }

  async total() {
    return this.db.get<{ total: number }>("SELECT total FROM visitor_counter")?.total ?? 0;
  }

  async increment() {
    return this.db.tx(() => {
      this.db.run("INSERT OR IGNORE INTO visitor_counter (id, total, secret) VALUES (1, 0, '')");
      return (
        this.db.get<{ total: number }>(
          "UPDATE visitor_counter SET total = total + 1 RETURNING total",
        ) as { total: number }
      ).total;
    }, true);
  }

  async secret() {
    const stored = this.db.get<{ secret: string }>("SELECT secret FROM visitor_counter")?.secret;
    if (stored) return stored;
    const fresh = randomBytes(32).toString("hex");
    return this.db.tx(() => {
      this.db.run("INSERT OR IGNORE INTO visitor_counter (id, total, secret) VALUES (1, 0, '')");
      this.db.run("UPDATE visitor_counter SET secret = ? WHERE secret = ''", fresh);
      return (
        this.db.get<{ secret: string }>("SELECT secret FROM visitor_counter") as {
          secret: string;
        }
      ).secret;
    }, true);
  }

  /** the counter of an earlier DATA_DIR, unless this database has one (an idempotent import) */
  importSync(total: number, secret: string) {
    this.db.write(
      "INSERT OR IGNORE INTO visitor_counter (id, total, secret) VALUES (1, ?, ?)",
      total,
      secret,
    );
  }
}
