import type { Db } from "mongodb";
import type {
  AuditEvent,
  AuditType,
  CorrectionsStore,
  Pin,
  PinField,
  Report,
  ReportStatus,
} from "../../reports/port";
import { isDuplicate } from "./errors";
import { ensureIndexes } from "./indexes";

/**
 * `openKey`: brand, kind and url while the report is open (unique: a duplicate is a vote on
 * the stored one), the report's own id once decided.
 */
type ReportDoc = Omit<Report, "id"> & { _id: string; openKey: string };
type PinDoc = Pin & { _id: string };
type AuditDoc = Omit<AuditEvent, "id"> & { _id: string };

const openKey = (r: Pick<Report, "brandId" | "kind" | "url">) =>
  `${r.brandId}|${r.kind}|${r.url ?? ""}`;
const toReport = ({ _id, openKey: _, ...rest }: ReportDoc): Report => ({ id: _id, ...rest });
const toPin = ({ _id, ...rest }: PinDoc): Pin => rest;
const toEvent = ({ _id, ...rest }: AuditDoc): AuditEvent => ({ id: _id, ...rest });

/** MongoDB corrections store: `reports`, `pins` (one per brand and field) and `audit_events`. */
export class MongoCorrectionsStore implements CorrectionsStore {
  constructor(private db: Db) {}

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "reports", [
      { key: { openKey: 1 }, unique: true, name: "openKey_unique" },
      { key: { status: 1, _id: -1 }, name: "status_id" },
    ]);
    await ensureIndexes(db, "audit_events", [
      { key: { brandId: 1, _id: -1 }, name: "brandId_id" },
      { key: { slug: 1, _id: -1 }, name: "slug_id" },
      { key: { type: 1, _id: -1 }, name: "type_id" },
    ]);
  }

  private get reportDocs() {
    return this.db.collection<ReportDoc>("reports");
  }
  private get pinDocs() {
    return this.db.collection<PinDoc>("pins");
  }
  private get auditDocs() {
    return this.db.collection<AuditDoc>("audit_events");
  }

  async fileReport(report: Report): Promise<Report> {
    const key = openKey(report);
    for (let attempt = 1; ; attempt++) {
      const voted = await this.reportDocs.findOneAndUpdate(
        { openKey: key, status: "open" },
        { $inc: { votes: 1 } },
        { returnDocument: "after" },
      );
      if (voted) return toReport(voted);
      const { id, ...rest } = report;
      try {
        await this.reportDocs.insertOne({ _id: id, ...rest, openKey: key });
        return report;
      } catch (err) {
        // another request filed the same report first: vote on it
        if (!isDuplicate(err) || attempt >= 3) throw err;
      }
    }
  }

  async reports(status: ReportStatus | undefined, limit: number): Promise<Report[]> {
    const docs = await this.reportDocs
      .find(status ? { status } : {})
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map(toReport);
  }

  async report(id: string): Promise<Report | null> {
    const doc = await this.reportDocs.findOne({ _id: id });
    return doc ? toReport(doc) : null;
  }

  async decideReport(
    id: string,
    status: Exclude<ReportStatus, "open">,
    by: string,
    at: string,
  ): Promise<Report | null> {
    const doc = await this.reportDocs.findOneAndUpdate(
      { _id: id, status: "open" },
      { $set: { status, decidedAt: at, decidedBy: by, openKey: id } },
      { returnDocument: "after" },
    );
    return doc ? toReport(doc) : null;
  }

  async pins(): Promise<Pin[]> {
    return (await this.pinDocs.find({}).sort({ _id: 1 }).toArray()).map(toPin);
  }

  async setPin(pin: Pin): Promise<void> {
    const _id = `${pin.brandId}:${pin.field}`;
    await this.pinDocs.replaceOne({ _id }, pin, { upsert: true });
  }

  async removePin(brandId: number, field: PinField): Promise<Pin | null> {
    const doc = await this.pinDocs.findOneAndDelete({ _id: `${brandId}:${field}` });
    return doc ? toPin(doc) : null;
  }

  async appendAudit(event: AuditEvent): Promise<void> {
    const { id, ...rest } = event;
    try {
      await this.auditDocs.insertOne({ _id: id, ...rest });
    } catch (err) {
      if (!isDuplicate(err)) throw err; // the same event appended twice: kept once
    }
  }

  async audit(brandId: number | null, slug: string, limit: number): Promise<AuditEvent[]> {
    const docs = await this.auditDocs
      .find(
        brandId === null
          ? { $or: [{ slug }, { brandId: null }] }
          : { brandId: { $in: [brandId, null] } },
      )
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map(toEvent);
  }

  async lastCatalogEvent(type: AuditType): Promise<AuditEvent | null> {
    const doc = await this.auditDocs.findOne({ type, brandId: null }, { sort: { _id: -1 } });
    return doc ? toEvent(doc) : null;
  }
}
