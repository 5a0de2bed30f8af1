import type { StoredSvg, Variant } from "../catalog/types";

export const REPORT_KINDS = [
  "wrong_logo",
  "missing_logo",
  "wrong_brand",
  "outdated",
  "other",
] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];
export const REPORT_STATUSES = ["open", "accepted", "rejected"] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** A user's report of a problem with a brand's data; duplicates of an open one are votes. */
export interface Report {
  /** sortable unique id */
  id: string;
  brandId: number;
  slug: string;
  kind: ReportKind;
  /** an https URL of the right artwork, never fetched before an operator accepts */
  url: string | null;
  note: string | null;
  status: ReportStatus;
  /** the first report and every duplicate of it while open */
  votes: number;
  /** the account that filed it first */
  accountId: string;
  createdAt: string;
  /** when an operator accepted or rejected it, and who (the operator token's label) */
  decidedAt: string | null;
  decidedBy: string | null;
}

export interface ReportStore {
  /**
   * Store a report, or, when an open report of the same brand, kind and url exists, add a vote
   * to that one; answers the stored report.
   */
  fileReport(report: Report): Promise<Report>;
  /** newest first, optionally of one status */
  reports(status: ReportStatus | undefined, limit: number): Promise<Report[]>;
  report(id: string): Promise<Report | null>;
  /** Mark an open report accepted or rejected; null when it is not open (or unknown). */
  decideReport(
    id: string,
    status: Exclude<ReportStatus, "open">,
    by: string,
    at: string,
  ): Promise<Report | null>;
}

/** What can be pinned on a brand: one artwork variant, or one of its fields. */
export type PinField = `artwork:${Variant}` | "name" | "brandColor" | "domains" | "aliases";

/** Pinned artwork: the sanitized mark and what was derived from it. */
export interface PinnedArtwork {
  svg: StoredSvg;
  /** variants derived from this mark (dark and light of a mono mark), served unless pinned too */
  derived: Partial<Record<Variant, StoredSvg>>;
  /** where it came from: "upload", or the URL it was fetched from */
  origin: string;
}

/** An operator's correction of one field of a brand: it beats every source. */
export interface Pin {
  brandId: number;
  slug: string;
  field: PinField;
  /** the pinned value: PinnedArtwork, a name, a colour (6 hex), a list of domains or aliases */
  value: PinnedArtwork | string | string[];
  /** the operator (the label of the token used) */
  by: string;
  at: string;
  why: string | null;
}

export interface PinStore {
  pins(): Promise<Pin[]>;
  /** Set (or replace) the pin of the brand's field. */
  setPin(pin: Pin): Promise<void>;
  /** Remove the pin of the brand's field; answers the removed pin, null when none was set. */
  removePin(brandId: number, field: PinField): Promise<Pin | null>;
}

export const AUDIT_TYPES = [
  "pin_set",
  "pin_removed",
  "report_accepted",
  "report_rejected",
  "discovery_stored",
  "takedown",
  "catalog_version",
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** One change to a brand (brandId null: a change of the whole catalog, a new build version). */
export interface AuditEvent {
  /** sortable unique id */
  id: string;
  brandId: number | null;
  slug: string | null;
  type: AuditType;
  at: string;
  /** the operator's label, "discovery", or "catalog" */
  by: string;
  /** what changed: the field, the report id, the domain, the versions */
  detail: Record<string, string | number | boolean | null>;
}

export interface AuditStore {
  appendAudit(event: AuditEvent): Promise<void>;
  /**
   * A brand's events and the catalog-wide ones, newest first: by its id, or by its slug when
   * the catalog no longer has it (`brandId` null: a discovered brand taken down)
   */
  audit(brandId: number | null, slug: string, limit: number): Promise<AuditEvent[]>;
  /** the newest catalog-wide event of a type (the last recorded build version) */
  lastCatalogEvent(type: AuditType): Promise<AuditEvent | null>;
}

/** Reports, pins and their audit trail, in the same store as everything else. */
export type CorrectionsStore = ReportStore & PinStore & AuditStore;
