import type { Database } from "../../../store/embedded/db";
import type { DiscoveryRecord, DiscoveryStore } from "./port";

/**
 * Embedded discovery store on the shared SQLite database: `discoveries`, the latest record per
 * domain (a taken-down one is never replaced), one JSON row each; `stored_at` (when this row
 * was written) lets a poll see a record another process stored after the poll's `since` even
 * when the record's own `at` is older.
 */
export class EmbeddedDiscoveryStore implements DiscoveryStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS discoveries (
        domain TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        at TEXT NOT NULL,
        stored_at TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS discoveries_by_at ON discoveries (at);
      CREATE INDEX IF NOT EXISTS discoveries_by_stored_at ON discoveries (stored_at);
      CREATE INDEX IF NOT EXISTS discoveries_by_refresh
        ON discoveries (json_extract(record, '$.refreshAt')) WHERE status = 'found';
    `);
  }

  async discoveries(since?: string) {
    const rows =
      since === undefined
        ? this.db.all<{ record: string }>("SELECT record FROM discoveries")
        : this.db.all<{ record: string }>(
            "SELECT record FROM discoveries WHERE at > ? OR stored_at > ?",
            since,
            since,
          );
    return rows.map((r) => JSON.parse(r.record) as DiscoveryRecord);
  }

  async discovery(domain: string) {
    const row = this.db.get<{ record: string }>(
      "SELECT record FROM discoveries WHERE domain = ?",
      domain,
    );
    return row ? (JSON.parse(row.record) as DiscoveryRecord) : null;
  }

  async discoveriesDue(before: string, staleBefore: string, limit: number) {
    return this.db
      .all<{ record: string }>(
        `SELECT record FROM discoveries WHERE status = 'found'
           AND (json_extract(record, '$.refreshAt') <= ?
             OR (json_extract(record, '$.refreshAt') IS NULL AND at <= ?))
         ORDER BY coalesce(json_extract(record, '$.refreshAt'), at) LIMIT ?`,
        before,
        staleBefore,
        limit,
      )
      .map((r) => JSON.parse(r.record) as DiscoveryRecord);
  }

  async saveDiscovery(record: DiscoveryRecord) {
    return this.saveSync(record, false);
  }

  /**
   * A taken-down record is final, also one another process stored. `keepAny`: any stored
   * record of the domain is kept (an idempotent import).
   */
  saveSync(record: DiscoveryRecord, keepAny: boolean): DiscoveryRecord {
    return this.db.tx(() => {
      const stored = this.db.get<{ status: string; record: string }>(
        "SELECT status, record FROM discoveries WHERE domain = ?",
        record.domain,
      );
      if (stored && (keepAny || stored.status === "taken_down"))
        return JSON.parse(stored.record) as DiscoveryRecord;
      this.db.run(
        "INSERT OR REPLACE INTO discoveries (domain, status, at, stored_at, record) VALUES (?, ?, ?, ?, ?)",
        record.domain,
        record.status,
        record.at,
        new Date().toISOString(),
        JSON.stringify(record),
      );
      return record;
    }, true);
  }
}
