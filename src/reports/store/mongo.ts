import type { Db } from "mongodb";
import { isDuplicate } from "../../store/mongo/errors";
import { ensureIndexes } from "../../store/mongo/indexes";
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

/**
 * `openKey`: the brand (or domain) and kind while the report is open (unique: a later filing
 * joins the stored one), the report's own id once decided.
 */
type ReportDoc = Omit<Report, "id"> & { _id: string; openKey: string };
/** One account's vote on a report: `_id` is "reportId|accountId". */
type VoteDoc = { _id: string; reportId: string; accountId: string; at: string };
type PinDoc = Pin & { _id: string };
type AuditDoc = Omit<AuditEvent, "id"> & { _id: string };
type StateDoc = Omit<BuiltBrandState, "id"> & { _id: string };

const toReport = ({ _id, openKey: _, ...rest }: ReportDoc): Report => ({ id: _id, ...rest });
const toPin = ({ _id, ...rest }: PinDoc): Pin => rest;
const toEvent = ({ _id, ...rest }: AuditDoc): AuditEvent => ({
  id: _id,
  ...rest,
  before: rest.before ?? null,
  after: rest.after ?? null,
});
const pinId = (brandId: number, field: PinField) => `${brandId}:${field}`;
/** Whether a (bulk) insert failed on duplicate keys alone. */
const duplicatesOnly = (err: unknown) => {
  const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
  return (writeErrors ? [writeErrors].flat() : [err]).every(isDuplicate);
};
const reportDoc = (r: Report): ReportDoc => {
  const { id, ...rest } = r;
  return { _id: id, ...rest, openKey: r.status === "open" ? openKey(r) : id };
};

/**
 * MongoDB corrections store: `reports` and `report_votes`, `pins` (one per brand and field),
 * `audit_events` (written by inserts only: nothing here updates or deletes an event), and
 * `catalog_state` with its version in `catalog_state_meta`.
 */
export class MongoCorrectionsStore implements CorrectionsStore {
  constructor(private db: Db) {}

  static async ensureIndexes(db: Db) {
    await migrateReports(db);
    await ensureIndexes(db, "reports", [
      { key: { openKey: 1 }, unique: true, name: "openKey_unique" },
      { key: { status: 1, _id: -1 }, name: "status_id" },
    ]);
    await ensureIndexes(db, "report_votes", [
      { key: { accountId: 1, reportId: -1 }, name: "accountId_reportId" },
    ]);
    await ensureIndexes(db, "audit_events", [
      { key: { brandId: 1, _id: -1 }, name: "brandId_id" },
      { key: { slug: 1, _id: -1 }, name: "slug_id" },
    ]);
  }

  private get reportDocs() {
    return this.db.collection<ReportDoc>("reports");
  }
  private get voteDocs() {
    return this.db.collection<VoteDoc>("report_votes");
  }
  private get pinDocs() {
    return this.db.collection<PinDoc>("pins");
  }
  private get auditDocs() {
    return this.db.collection<AuditDoc>("audit_events");
  }
  private get stateDocs() {
    return this.db.collection<StateDoc>("catalog_state");
  }
  private get stateMeta() {
    return this.db.collection<{ _id: string; version: string }>("catalog_state_meta");
  }

  async fileReport(report: Report, filing: Filing) {
    const key = openKey(report);
    for (let attempt = 1; ; attempt++) {
      const open = await this.reportDocs.findOne({ openKey: key, status: "open" });
      if (!open) {
        const made = firstFiling(report, filing);
        try {
          await this.reportDocs.insertOne(reportDoc(made));
          await this.vote(made.id, filing);
          return { report: made, voted: true };
        } catch (err) {
          // another request filed the same report first: join it
          if (!isDuplicate(err) || attempt >= 5) throw err;
          continue;
        }
      }
      const stored = toReport(open);
      const voted = await this.vote(stored.id, filing);
      const joined = withFiling(stored, filing, voted);
      if (joined === stored) return { report: stored, voted };
      const added = {
        ...(joined.urls !== stored.urls
          ? { urls: { $each: joined.urls.slice(stored.urls.length) } }
          : {}),
        ...(joined.notes !== stored.notes
          ? { notes: { $each: joined.notes.slice(stored.notes.length) } }
          : {}),
      };
      const doc = await this.reportDocs.findOneAndUpdate(
        { _id: stored.id, status: "open" },
        {
          $inc: { votes: voted ? 1 : 0 },
          $set: { updatedAt: joined.updatedAt },
          ...(Object.keys(added).length ? { $push: added } : {}),
        },
        { returnDocument: "after" },
      );
      if (doc) return { report: toReport(doc), voted };
      // decided meanwhile: the filing makes a new report
      if (attempt >= 5) throw new Error(`report ${stored.id} changed while filing`);
    }
  }

  /** The account's vote on the report: true when it is its first. */
  private async vote(reportId: string, filing: Filing): Promise<boolean> {
    try {
      await this.voteDocs.insertOne({
        _id: `${reportId}|${filing.accountId}`,
        reportId,
        accountId: filing.accountId,
        at: filing.at,
      });
      return true;
    } catch (err) {
      if (isDuplicate(err)) return false;
      throw err;
    }
  }

  async reports(status: ReportStatus | undefined, limit: number, before?: string) {
    const docs = await this.reportDocs
      .find({ ...(status ? { status } : {}), ...(before ? { _id: { $lt: before } } : {}) })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map(toReport);
  }

  async reportsOf(accountId: string, limit: number, before?: string): Promise<OwnReport[]> {
    const votes = await this.voteDocs
      .find({ accountId, ...(before ? { reportId: { $lt: before } } : {}) })
      .sort({ reportId: -1 })
      .limit(limit)
      .toArray();
    const docs = await this.reportDocs
      .find({ _id: { $in: votes.map((v) => v.reportId) } })
      .toArray();
    const byId = new Map(docs.map((d) => [d._id, toReport(d)]));
    return votes.flatMap((v) => {
      const r = byId.get(v.reportId);
      return r ? [{ ...r, filedAt: v.at }] : [];
    });
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

  async setPin(pin: Pin): Promise<Pin | null> {
    const before = await this.pinDocs.findOneAndReplace(
      { _id: pinId(pin.brandId, pin.field) },
      pin,
      { upsert: true, returnDocument: "before" },
    );
    return before ? toPin(before) : null;
  }

  async removePin(brandId: number, field: PinField): Promise<Pin | null> {
    const doc = await this.pinDocs.findOneAndDelete({ _id: pinId(brandId, field) });
    return doc ? toPin(doc) : null;
  }

  async movePin(from: Pin, to: Pin) {
    const target = pinId(to.brandId, to.field);
    if (await this.pinDocs.findOne({ _id: target })) return "taken" as const;
    const taken = await this.pinDocs.findOneAndDelete({ _id: pinId(from.brandId, from.field) });
    if (!taken) return "gone" as const;
    try {
      await this.pinDocs.insertOne({ _id: target, ...to });
      return "moved" as const;
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      // the target was pinned meanwhile: the pin goes back where it was
      await this.pinDocs.insertOne(taken);
      return "taken" as const;
    }
  }

  async appendAudit(events: AuditEvent[]): Promise<void> {
    if (!events.length) return;
    try {
      await this.auditDocs.insertMany(
        events.map(({ id, ...rest }) => ({ _id: id, ...rest })),
        { ordered: false },
      );
    } catch (err) {
      // the same event appended twice: kept once
      if (!duplicatesOnly(err)) throw err;
    }
  }

  async audit(scope: AuditScope, limit: number, before?: string): Promise<AuditEvent[]> {
    const docs = await this.auditDocs
      .find({
        $or: [{ brandId: { $in: scope.brandIds } }, { slug: { $in: scope.slugs } }],
        ...(before ? { _id: { $lt: before } } : {}),
      })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
    return docs.map(toEvent);
  }

  async catalogStateVersion(): Promise<string | null> {
    return (await this.stateMeta.findOne({ _id: "version" }))?.version ?? null;
  }

  async claimCatalogState(from: string | null, to: string): Promise<boolean> {
    if (from === null) {
      try {
        await this.stateMeta.insertOne({ _id: "version", version: to });
        return true;
      } catch (err) {
        if (isDuplicate(err)) return false;
        throw err;
      }
    }
    const r = await this.stateMeta.updateOne(
      { _id: "version", version: from },
      { $set: { version: to } },
    );
    return r.modifiedCount === 1;
  }

  async catalogState(): Promise<BuiltBrandState[]> {
    const docs = await this.stateDocs.find({}).toArray();
    return docs.map(({ _id, ...rest }) => ({ id: Number(_id), ...rest }));
  }

  async putCatalogState(changed: BuiltBrandState[], gone: number[]): Promise<void> {
    const CHUNK = 500;
    // replaced as delete and insert: FerretDB stalls on large bulk replacements
    const ids = [...gone, ...changed.map((s) => s.id)].map(String);
    for (let i = 0; i < ids.length; i += CHUNK)
      await this.stateDocs.deleteMany({ _id: { $in: ids.slice(i, i + CHUNK) } });
    for (let i = 0; i < changed.length; i += CHUNK)
      await this.stateDocs
        .insertMany(
          changed.slice(i, i + CHUNK).map(({ id, ...rest }) => ({ _id: String(id), ...rest })),
          { ordered: false },
        )
        .catch((err) => {
          // another instance recording the same first version wrote the same rows
          if (!duplicatesOnly(err)) throw err;
        });
  }
}

/**
 * Reports stored before filings joined by brand and kind (an `openKey` with the url, one `url`
 * and `note`): rewritten in the current shape, open duplicates folded into the oldest, a vote
 * for each report's first account. Nothing is dropped.
 */
async function migrateReports(db: Db) {
  const col = db.collection<ReportDoc & { url?: string | null; note?: string | null }>("reports");
  const old = await col.find({ urls: { $exists: false } }).toArray();
  if (!old.length) return;
  const rows = old.map((d) => upgradeReport(toReport(d)));
  const { kept, folded } = foldDuplicates(rows);
  if (folded.size) await col.deleteMany({ _id: { $in: [...folded.keys()] } });
  for (const r of kept) await col.replaceOne({ _id: r.id }, reportDoc(r));
  for (const r of rows)
    await db
      .collection<VoteDoc>("report_votes")
      .insertOne({
        _id: `${folded.get(r.id) ?? r.id}|${r.accountId}`,
        reportId: folded.get(r.id) ?? r.id,
        accountId: r.accountId,
        at: r.createdAt,
      })
      .catch((err) => {
        if (!isDuplicate(err)) throw err;
      });
}
