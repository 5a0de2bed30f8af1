import type { Database } from "../../store/embedded/db";
import { firstFiling, foldDuplicates, openKey, upgradeReport, withFiling } from "../filing";
import type {
  AuditEvent,
  AuditScope,
  BuiltBrandState,
  CorrectionsStore,
  Filing,
  OwnReport,
  Pin,
  PinField,
  Report,
  ReportStatus,
} from "./port";

const APPEND_ONLY = "audit_events is append-only";

/**
 * Embedded corrections store on the shared SQLite database:
 *
 *   reports          one JSON row each; a unique index on `open_key` (brand or domain, and kind)
 *                    among open reports makes a later filing join the open one, atomically
 *                    across processes
 *   report_votes     one row per report and account that filed it (one vote each)
 *   pins             one row per brand and field
 *   audit_events     append-only: triggers refuse UPDATE and DELETE, and skip an INSERT of
 *                    an id already there (so INSERT OR REPLACE cannot rewrite an event)
 *   catalog_state    the built brands as the audit last recorded them (slug, name, variants'
 *                    sha256 and source), and `catalog_state_version` the version they are of
 *
 * Every write is durable: an operator's correction is on disk before it is answered.
 */
export class EmbeddedCorrectionsStore implements CorrectionsStore {
  constructor(private db: Database) {
    db.tx(() => {
      migrateReports(db);
      db.exec(`
        CREATE TABLE IF NOT EXISTS reports (
          id TEXT PRIMARY KEY,
          open_key TEXT NOT NULL,
          status TEXT NOT NULL,
          record TEXT NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS reports_open_key ON reports (open_key) WHERE status = 'open';
        CREATE INDEX IF NOT EXISTS reports_status ON reports (status, id);
        CREATE TABLE IF NOT EXISTS report_votes (
          report_id TEXT NOT NULL,
          account_id TEXT NOT NULL,
          at TEXT NOT NULL,
          PRIMARY KEY (report_id, account_id)
        );
        CREATE INDEX IF NOT EXISTS report_votes_account ON report_votes (account_id, report_id);
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
        DROP INDEX IF EXISTS audit_by_type;
        CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
          BEGIN SELECT RAISE(ABORT, '${APPEND_ONLY}'); END;
        CREATE TRIGGER IF NOT EXISTS audit_events_no_delete BEFORE DELETE ON audit_events
          BEGIN SELECT RAISE(ABORT, '${APPEND_ONLY}'); END;
        CREATE TRIGGER IF NOT EXISTS audit_events_no_replace BEFORE INSERT ON audit_events
          WHEN EXISTS (SELECT 1 FROM audit_events WHERE id = NEW.id)
          BEGIN SELECT RAISE(IGNORE); END;
        CREATE TABLE IF NOT EXISTS catalog_state (id INTEGER PRIMARY KEY, state TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS catalog_state_version (
          one INTEGER PRIMARY KEY CHECK (one = 1),
          version TEXT NOT NULL
        );
      `);
    });
  }

  async fileReport(report: Report, filing: Filing) {
    return this.db.tx(() => {
      const open = this.db.get<{ record: string }>(
        "SELECT record FROM reports WHERE open_key = ? AND status = 'open'",
        openKey(report),
      );
      if (!open) {
        const made = firstFiling(report, filing);
        this.db.run(
          "INSERT INTO reports (id, open_key, status, record) VALUES (?, ?, 'open', ?)",
          made.id,
          openKey(made),
          JSON.stringify(made),
        );
        this.vote(made.id, filing);
        return { report: made, voted: true };
      }
      const stored = JSON.parse(open.record) as Report;
      const voted = this.vote(stored.id, filing);
      const joined = withFiling(stored, filing, voted);
      if (joined !== stored)
        this.db.run(
          "UPDATE reports SET record = ? WHERE id = ?",
          JSON.stringify(joined),
          stored.id,
        );
      return { report: joined, voted };
    }, true);
  }

  /** The account's vote on the report: true when it is its first. */
  private vote(reportId: string, filing: Filing): boolean {
    return (
      Number(
        this.db.run(
          "INSERT OR IGNORE INTO report_votes (report_id, account_id, at) VALUES (?, ?, ?)",
          reportId,
          filing.accountId,
          filing.at,
        ).changes,
      ) > 0
    );
  }

  async reports(status: ReportStatus | undefined, limit: number, before?: string) {
    const rows = this.db.all<{ record: string }>(
      `SELECT record FROM reports WHERE (?1 IS NULL OR status = ?1) AND id < ?2 ORDER BY id DESC LIMIT ?3`,
      status ?? null,
      before ?? "\uffff",
      limit,
    );
    return rows.map((r) => JSON.parse(r.record) as Report);
  }

  async reportsOf(accountId: string, limit: number, before?: string): Promise<OwnReport[]> {
    const rows = this.db.all<{ record: string; at: string }>(
      `SELECT r.record, v.at FROM report_votes v JOIN reports r ON r.id = v.report_id
       WHERE v.account_id = ? AND v.report_id < ? ORDER BY v.report_id DESC LIMIT ?`,
      accountId,
      before ?? "\uffff",
      limit,
    );
    return rows.map((r) => ({ ...(JSON.parse(r.record) as Report), filedAt: r.at }));
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

  private pin(brandId: number, field: PinField): Pin | null {
    const row = this.db.get<{ record: string }>(
      "SELECT record FROM pins WHERE brand_id = ? AND field = ?",
      brandId,
      field,
    );
    return row ? (JSON.parse(row.record) as Pin) : null;
  }

  async setPin(pin: Pin): Promise<Pin | null> {
    return this.db.tx(() => {
      const before = this.pin(pin.brandId, pin.field);
      this.db.run(
        "INSERT OR REPLACE INTO pins (brand_id, field, record) VALUES (?, ?, ?)",
        pin.brandId,
        pin.field,
        JSON.stringify(pin),
      );
      return before;
    }, true);
  }

  async removePin(brandId: number, field: PinField): Promise<Pin | null> {
    return this.db.tx(() => {
      const before = this.pin(brandId, field);
      if (before) this.db.run("DELETE FROM pins WHERE brand_id = ? AND field = ?", brandId, field);
      return before;
    }, true);
  }

  async movePin(from: Pin, to: Pin) {
    return this.db.tx(() => {
      if (this.pin(to.brandId, to.field)) return "taken" as const;
      if (!this.pin(from.brandId, from.field)) return "gone" as const;
      this.db.run("DELETE FROM pins WHERE brand_id = ? AND field = ?", from.brandId, from.field);
      this.db.run(
        "INSERT INTO pins (brand_id, field, record) VALUES (?, ?, ?)",
        to.brandId,
        to.field,
        JSON.stringify(to),
      );
      return "moved" as const;
    }, true);
  }

  async appendAudit(events: AuditEvent[]): Promise<void> {
    if (!events.length) return;
    this.db.tx(() => {
      for (const e of events)
        this.db.run(
          "INSERT OR IGNORE INTO audit_events (id, brand_id, slug, type, record) VALUES (?, ?, ?, ?, ?)",
          e.id,
          e.brandId,
          e.slug,
          e.type,
          JSON.stringify(e),
        );
    }, true);
  }

  async audit(scope: AuditScope, limit: number, before?: string): Promise<AuditEvent[]> {
    const rows = this.db.all<{ record: string }>(
      `SELECT record FROM audit_events
       WHERE (brand_id IN (SELECT value FROM json_each(?1)) OR slug IN (SELECT value FROM json_each(?2)))
         AND id < ?3
       ORDER BY id DESC LIMIT ?4`,
      JSON.stringify(scope.brandIds),
      JSON.stringify(scope.slugs),
      before ?? "\uffff",
      limit,
    );
    return rows.map((r) => ({ before: null, after: null, ...JSON.parse(r.record) }) as AuditEvent);
  }

  async catalogStateVersion(): Promise<string | null> {
    return (
      this.db.get<{ version: string }>("SELECT version FROM catalog_state_version")?.version ?? null
    );
  }

  async claimCatalogState(from: string | null, to: string): Promise<boolean> {
    const r =
      from === null
        ? this.db.write(
            "INSERT OR IGNORE INTO catalog_state_version (one, version) VALUES (1, ?)",
            to,
          )
        : this.db.write(
            "UPDATE catalog_state_version SET version = ? WHERE one = 1 AND version = ?",
            to,
            from,
          );
    return Number(r.changes) > 0;
  }

  async catalogState(): Promise<BuiltBrandState[]> {
    return this.db
      .all<{ state: string }>("SELECT state FROM catalog_state ORDER BY id")
      .map((r) => JSON.parse(r.state) as BuiltBrandState);
  }

  async putCatalogState(changed: BuiltBrandState[], gone: number[]): Promise<void> {
    this.db.tx(() => {
      for (const id of gone) this.db.run("DELETE FROM catalog_state WHERE id = ?", id);
      for (const s of changed)
        this.db.run(
          "INSERT OR REPLACE INTO catalog_state (id, state) VALUES (?, ?)",
          s.id,
          JSON.stringify(s),
        );
    }, true);
  }
}

/**
 * Reports stored before filings joined by brand and kind (a `url` column in the open-report
 * index, one url and note per report): rewritten in the current shape, open duplicates folded
 * into the oldest, and a vote row for each report's first account. Nothing is dropped.
 */
function migrateReports(db: Database) {
  const old = db.get<{ n: number }>(
    "SELECT count(*) AS n FROM pragma_table_info('reports') WHERE name = 'url'",
  );
  if (!old?.n) return;
  const rows = db
    .all<{ record: string }>("SELECT record FROM reports")
    .map((r) => upgradeReport(JSON.parse(r.record)));
  const { kept, folded } = foldDuplicates(rows);
  db.exec(`
    DROP INDEX IF EXISTS reports_open_once;
    DROP INDEX IF EXISTS reports_by_status;
    DROP TABLE reports;
    CREATE TABLE reports (id TEXT PRIMARY KEY, open_key TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS report_votes (
      report_id TEXT NOT NULL, account_id TEXT NOT NULL, at TEXT NOT NULL,
      PRIMARY KEY (report_id, account_id));
  `);
  for (const r of kept)
    db.run(
      "INSERT INTO reports (id, open_key, status, record) VALUES (?, ?, ?, ?)",
      r.id,
      openKey(r),
      r.status,
      JSON.stringify(r),
    );
  for (const r of rows)
    db.run(
      "INSERT OR IGNORE INTO report_votes (report_id, account_id, at) VALUES (?, ?, ?)",
      folded.get(r.id) ?? r.id,
      r.accountId,
      r.createdAt,
    );
}
