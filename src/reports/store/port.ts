import type { StoredSvg, Variant } from "../../catalog/built-catalog";

/** What a user may report. `missing_brand`: a company the catalog lacks, named by its domain. */
export const REPORT_KINDS = [
  "wrong_logo",
  "missing_logo",
  "wrong_brand",
  "outdated",
  "missing_brand",
  "other",
] as const;
/** What the service itself puts in the queue: a pin a catalog build left without its brand. */
export const SYSTEM_REPORT_KINDS = ["pin_orphaned"] as const;
export const ALL_REPORT_KINDS = [...REPORT_KINDS, ...SYSTEM_REPORT_KINDS] as const;
export type ReportKind = (typeof ALL_REPORT_KINDS)[number];
export const REPORT_STATUSES = ["open", "accepted", "rejected"] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];
/** The account of reports the service files itself. */
export const SYSTEM_ACCOUNT = "system";

/** A note a reporter attached to a report. */
export interface ReportNote {
  text: string;
  at: string;
  accountId: string;
}

/**
 * A problem with a brand's data (or a company the catalog lacks): one open report per brand
 * (or domain) and kind gathers every account's filing: one vote per account, their URLs and
 * notes attached.
 */
export interface Report {
  /** sortable unique id */
  id: string;
  /** null for a company the catalog does not have (`missing_brand`, named by `domain`) */
  brandId: number | null;
  slug: string | null;
  /** the registrable domain a `missing_brand` report names (null otherwise) */
  domain: string | null;
  kind: ReportKind;
  /** https URLs of the right artwork the reporters gave, distinct, first first (at most 20) */
  urls: string[];
  /** the reporters' notes, oldest first (at most 50) */
  notes: ReportNote[];
  status: ReportStatus;
  /** accounts that filed it while open (each counts once) */
  votes: number;
  /** the account that filed it first */
  accountId: string;
  createdAt: string;
  /** the last filing that attached a vote, URL or note */
  updatedAt: string;
  /** when an operator accepted or rejected it, and who (the operator's identity) */
  decidedAt: string | null;
  decidedBy: string | null;
}

/** One account's filing of a report. */
export interface Filing {
  accountId: string;
  url: string | null;
  note: string | null;
  at: string;
}

/** A report as the account that filed it sees it, with when that account filed it. */
export type OwnReport = Report & { filedAt: string };

export interface ReportStore {
  /**
   * File `report` as `filing`: a new report when no open one of the same brand (or domain) and
   * kind exists, else the filing joins that one: a vote when the account has not voted on it
   * yet, its URL and note attached (duplicates and those beyond the caps left out).
   * Atomic across processes. Answers the stored report and whether the filing was a new vote.
   */
  fileReport(report: Report, filing: Filing): Promise<{ report: Report; voted: boolean }>;
  /** newest first, optionally of one status, those older than `before` (a report id) */
  reports(status: ReportStatus | undefined, limit: number, before?: string): Promise<Report[]>;
  /** the reports an account filed or voted on, newest first, older than `before` */
  reportsOf(accountId: string, limit: number, before?: string): Promise<OwnReport[]>;
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
  /** variants of the brand's own artwork a color or mono pin leaves served (default none) */
  keep?: Variant[];
}

/** A pin that removes a variant: the brand is served without it. */
export interface RemovedArtwork {
  removed: true;
}

/** An operator's correction of one field of a brand: it beats every source. */
export interface Pin {
  brandId: number;
  slug: string;
  field: PinField;
  /** the pinned value: artwork (or its removal), a name, a colour (6 hex), domains or aliases */
  value: PinnedArtwork | RemovedArtwork | string | string[];
  /** the operator's identity */
  by: string;
  at: string;
  why: string | null;
}

export interface PinStore {
  pins(): Promise<Pin[]>;
  /** Set (or replace) the pin of the brand's field; answers the pin it replaced, if any. */
  setPin(pin: Pin): Promise<Pin | null>;
  /** Remove the pin of the brand's field; answers the removed pin, null when none was set. */
  removePin(brandId: number, field: PinField): Promise<Pin | null>;
  /**
   * Move the pin of `from`'s field to `to` (another brand, same field), atomically: "taken"
   * when `to` has its own pin on that field (nothing changes), "gone" when `from` has none
   * any more (another instance moved it).
   */
  movePin(from: Pin, to: Pin): Promise<"moved" | "taken" | "gone">;
}

export const AUDIT_TYPES = [
  "pin_set",
  "pin_replaced",
  "pin_removed",
  "pin_moved",
  "pin_orphaned",
  "report_accepted",
  "report_rejected",
  "discovery_stored",
  "discovery_refreshed",
  "discovery_refused",
  "takedown",
  "catalog_changed",
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** A value before or after a change: scalars, lists, and one level of named strings. */
export type AuditValue = Record<
  string,
  string | number | boolean | null | string[] | Record<string, string>
>;

/** One change to a brand, with who made it and the value before and after. */
export interface AuditEvent {
  /** sortable unique id (UUIDv7): the trail's order and its cursor */
  id: string;
  /** null: a company the catalog does not have (a `missing_brand` report decided) */
  brandId: number | null;
  slug: string | null;
  type: AuditType;
  at: string;
  /**
   * who: an operator's identity (`admin:<name>`, `admin:token-<8 hex>`, `cli:<user>@<host>`),
   * "discovery", "catalog" (a build), or "system" (a pin moved or reported after a build)
   */
  by: string;
  /** the value before and after the change (artwork by its sha256 and provenance) */
  before: AuditValue | null;
  after: AuditValue | null;
  /** what changed: the field, the report, the domain, the versions */
  detail: Record<string, string | number | boolean | null>;
}

/** Which events make a brand's trail: its id, and the slugs it had (a retired or gone brand). */
export interface AuditScope {
  brandIds: number[];
  slugs: string[];
}

/** A built brand as the audit last recorded it: slug, name and each variant's sha256 and source. */
export interface BuiltBrandState {
  id: number;
  slug: string;
  name: string;
  variants: Partial<Record<Variant, { sha256: string; source: string }>>;
}

export interface AuditStore {
  /** Append events (an event appended twice is kept once). The trail is never updated. */
  appendAudit(events: AuditEvent[]): Promise<void>;
  /** The scope's events, newest first, older than `before` (an event id) */
  audit(scope: AuditScope, limit: number, before?: string): Promise<AuditEvent[]>;
  /** The catalog version the recorded built brands are of (null: none recorded yet). */
  catalogStateVersion(): Promise<string | null>;
  /**
   * Move the recorded version from `from` to `to`: true for the one caller (process or
   * instance) that moved it, who then records the build's changes.
   */
  claimCatalogState(from: string | null, to: string): Promise<boolean>;
  catalogState(): Promise<BuiltBrandState[]>;
  /** Record the built brands that changed or are new, and forget the ones gone. */
  putCatalogState(changed: BuiltBrandState[], gone: number[]): Promise<void>;
}

/** Reports, pins and their audit trail, in the same store as everything else. */
export type CorrectionsStore = ReportStore & PinStore & AuditStore;
