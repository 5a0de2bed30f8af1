import type {
  AuditEvent,
  AuditType,
  CorrectionsStore,
  Pin,
  PinField,
  Report,
  ReportStatus,
} from "../../reports/port";
import type { Database } from "./db";

/**
 * Embedded corrections store on the shared SQLite database: `reports` (one JSON row each; a
 * unique index on brand, kind and url among open reports makes a duplicate a vote, atomically
 * across processes), `pins` (one row per brand and field) and `audit_events` (append-only).
 * Every write is durable: an operator's correction is on disk before it is answered.
 */
export class EmbeddedCorrectionsStore implements CorrectionsStore {
  constructor(private db: Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS reports (
        id TEXT PRIMARY KEY,
        brand_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        url TEXT NOT NULL,
        status TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS reports_open_once
        ON reports (brand_id, kind, url) WHERE status = 'open';
      CREATE INDEX IF NOT EXISTS reports_by_status ON reports (status, id);
      CREATE TABLE IF NOT EXISTS pins (
        brand_id INTEGER NOT NULL,
        field TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (brand_id, field)
      );
      CREATE TABLE IF NOT EXISTS audit_events (
        id TEXT PRIMARY KEY,
        brand_id INTEGER,
        slug TEXT,
        type TEXT NOT NULL,
        record TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS audit_by_brand ON audit_events (brand_id, id);
      CREATE INDEX IF NOT EXISTS audit_by_slug ON audit_events (slug, id);
      CREATE INDEX IF NOT EXISTS audit_by_type ON audit_events (type, id);
    `);
  }

  async fileReport(report: Report): Promise<Report> {
    return this.db.tx(() => {
      const open = this.db.get<{ id: string; record: string }>(
        "SELECT id, record FROM reports WHERE brand_id = ? AND kind = ? AND url = ? AND status = 'open'",
        report.brandId,
        report.kind,
        report.url ?? "",
      );
      if (open) {
        const stored = JSON.parse(open.record) as Report;
        const voted = { ...stored, votes: stored.votes + 1 };
        this.db.run("UPDATE reports SET record = ? WHERE id = ?", JSON.stringify(voted), open.id);
        return voted;
      }
      this.db.run(
        "INSERT INTO reports (id, brand_id, kind, url, status, record) VALUES (?, ?, ?, ?, ?, ?)",
        report.id,
        report.brandId,
        report.kind,
        report.url ?? "",
        report.status,
        JSON.stringify(report),
      );
      return report;
    }, true);
  }

  async reports(status: ReportStatus | undefined, limit: number): Promise<Report[]> {
    const rows = status
      ? this.db.all<{ record: string }>(
          "SELECT record FROM reports WHERE status = ? ORDER BY id DESC LIMIT ?",
          status,
          limit,
        )
      : this.db.all<{ record: string }>(
          "SELECT record FROM reports ORDER BY id DESC LIMIT ?",
          limit,
        );
    return rows.map((r) => JSON.parse(r.record) as Report);
  }

  async report(id: string): Promise<Report | null> {
    const row = this.db.get<{ record: string }>("SELECT record FROM reports WHERE id = ?", id);
    return row ? (JSON.parse(row.record) as Report) : null;
  }

  async decideReport(
    id: string,
    status: Exclude<ReportStatus, "open">,
    by: string,
    at: string,
  ): Promise<Report | null> {
    return this.db.tx(() => {
      const row = this.db.get<{ record: string }>(
        "SELECT record FROM reports WHERE id = ? AND status = 'open'",
        id,
      );
      if (!row) return null;
      const decided: Report = {
        ...(JSON.parse(row.record) as Report),
        status,
        decidedAt: at,
        decidedBy: by,
      };
      this.db.run(
        "UPDATE reports SET status = ?, record = ? WHERE id = ?",
        status,
        JSON.stringify(decided),
        id,
      );
      return decided;
    }, true);
  }

  async pins(): Promise<Pin[]> {
    return this.db
      .all<{ record: string }>("SELECT record FROM pins ORDER BY brand_id, field")
      .map((r) => JSON.parse(r.record) as Pin);
  }

  async setPin(pin: Pin): Promise<void> {
    this.db.write(
      "INSERT OR REPLACE INTO pins (brand_id, field, record) VALUES (?, ?, ?)",
      pin.brandId,
      pin.field,
      JSON.stringify(pin),
    );
  }

  async removePin(brandId: number, field: PinField): Promise<Pin | null> {
    return this.db.tx(() => {
      const row = this.db.get<{ record: string }>(
        "SELECT record FROM pins WHERE brand_id = ? AND field = ?",
        brandId,
        field,
      );
      if (!row) return null;
      this.db.run("DELETE FROM pins WHERE brand_id = ? AND field = ?", brandId, field);
      return JSON.parse(row.record) as Pin;
    }, true);
  }

  async appendAudit(event: AuditEvent): Promise<void> {
    this.db.write(
      "INSERT OR IGNORE INTO audit_events (id, brand_id, slug, type, record) VALUES (?, ?, ?, ?, ?)",
      event.id,
      event.brandId,
      event.slug,
      event.type,
      JSON.stringify(event),
    );
  }

  async audit(brandId: number | null, slug: string, limit: number): Promise<AuditEvent[]> {
    const rows =
      brandId === null
        ? this.db.all<{ record: string }>(
            "SELECT record FROM audit_events WHERE slug = ? OR brand_id IS NULL ORDER BY id DESC LIMIT ?",
            slug,
            limit,
          )
        : this.db.all<{ record: string }>(
            "SELECT record FROM audit_events WHERE brand_id = ? OR brand_id IS NULL ORDER BY id DESC LIMIT ?",
            brandId,
            limit,
          );
    return rows.map((r) => JSON.parse(r.record) as AuditEvent);
  }

  async lastCatalogEvent(type: AuditType): Promise<AuditEvent | null> {
    const row = this.db.get<{ record: string }>(
      "SELECT record FROM audit_events WHERE type = ? AND brand_id IS NULL ORDER BY id DESC LIMIT 1",
      type,
    );
    return row ? (JSON.parse(row.record) as AuditEvent) : null;
  }
}
