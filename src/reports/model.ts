import { t } from "elysia";
import { ArtworkSource, VariantName } from "../catalog/model";
import { queryInt } from "../http/params";
import { NOTE_MAX } from "./service";
import { ALL_REPORT_KINDS, AUDIT_TYPES, REPORT_KINDS, REPORT_STATUSES } from "./store/port";

/**
 * POST /v1/reports. `kind`, `url` and `note` are checked by the service (400 invalid_report
 * naming the field), so their rules are described here rather than enforced by the schema.
 */
export const ReportBody = t.Object({
  slug: t.Optional(t.String({ maxLength: 200, description: "The brand's slug (or domain)" })),
  domain: t.Optional(
    t.String({
      maxLength: 253,
      description: "A domain of the brand (or slug); for missing_brand, the company's domain",
    }),
  ),
  kind: t.String({
    description: `One of ${REPORT_KINDS.join(", ")}. missing_brand: a company the catalog does not have, named by \`domain\``,
    examples: ["wrong_logo"],
  }),
  url: t.Optional(
    t.String({
      description:
        "An https URL of the right artwork (no IP address, no local name); fetched only after an operator accepts the report",
    }),
  ),
  note: t.Optional(t.String({ description: `At most ${NOTE_MAX} characters` })),
});

export const ReportFiled = t.Object({
  id: t.String(),
  slug: t.Union([t.String(), t.Null()], { description: "null for a missing_brand report" }),
  domain: t.Union([t.String(), t.Null()], {
    description: "The registrable domain of a missing_brand report, else null",
  }),
  kind: t.UnionEnum(REPORT_KINDS),
  status: t.UnionEnum(REPORT_STATUSES),
  votes: t.Integer({
    description: "Accounts that filed this report while open (each counts once)",
  }),
  voted: t.Boolean({
    description:
      "false when this account had filed the report already: its url and note were attached, no vote added",
  }),
  discoveryQueued: t.Boolean({
    description:
      "missing_brand: true when the domain's website was queued for logo discovery (discovery is on)",
  }),
});

/** A page cursor: the `next` of the previous page. */
const cursor = t.Optional(
  t.String({
    pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    description: "The `next` of the previous page; omit for the first page",
    error: "Invalid query parameter cursor: must be the `next` of the previous page",
  }),
);
const next = t.Union([t.String(), t.Null()], {
  description: "Pass as `cursor` for the next page; null on the last page",
});

export const PageQuery = t.Object({ limit: t.Optional(queryInt("limit", 1, 100, 20)), cursor });

export const OwnReport = t.Object({
  id: t.String(),
  slug: t.Union([t.String(), t.Null()]),
  domain: t.Union([t.String(), t.Null()]),
  kind: t.UnionEnum(REPORT_KINDS),
  status: t.UnionEnum(REPORT_STATUSES, {
    description: "open (waiting for an operator), accepted (corrected) or rejected",
  }),
  votes: t.Integer({ description: "Accounts that filed it" }),
  notes: t.Array(t.Object({ text: t.String(), at: t.String({ format: "date-time" }) }), {
    description: "The notes this account attached",
  }),
  filedAt: t.String({ format: "date-time", description: "When this account first filed it" }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  decidedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const OwnReports = t.Object({ items: t.Array(OwnReport), next });

export const AuditQuery = t.Object({ limit: t.Optional(queryInt("limit", 1, 1000, 100)), cursor });

export const ReportStatusQuery = t.Object({
  // explicit literals: Elysia fills a missing optional t.UnionEnum query value with its first member
  status: t.Optional(t.Union([t.Literal("open"), t.Literal("accepted"), t.Literal("rejected")])),
  limit: t.Optional(queryInt("limit", 1, 500, 100)),
  cursor,
});

const PinValue = t.Union([
  t.String(),
  t.Array(t.String()),
  t.Object({
    sha256: t.String(),
    origin: t.String({ description: '"upload", or the URL the artwork was fetched from' }),
    derived: t.Array(t.String(), { description: "Variants derived from the pinned mark" }),
    keep: t.Array(t.String(), {
      description: "Variants of the brand's own artwork a color or mono pin leaves served",
    }),
  }),
  t.Object({ removed: t.Literal(true) }, { description: "The variant is not served" }),
]);

export const PinView = t.Object({
  slug: t.String(),
  brandId: t.Integer(),
  field: t.String({ description: "artwork:<variant>, name, brandColor, domains or aliases" }),
  value: PinValue,
  by: t.String({ description: "The operator's identity" }),
  at: t.String({ format: "date-time" }),
  why: t.Union([t.String(), t.Null()]),
});

const ReportFields = {
  id: t.String(),
  brandId: t.Union([t.Integer(), t.Null()], {
    description: "null: a company the catalog does not have (missing_brand)",
  }),
  slug: t.Union([t.String(), t.Null()]),
  domain: t.Union([t.String(), t.Null()]),
  kind: t.UnionEnum(ALL_REPORT_KINDS, {
    description: "The users' kinds, and pin_orphaned: a pin a catalog build left without its brand",
  }),
  urls: t.Array(t.String(), { description: "The reporters' URLs, distinct, first first" }),
  notes: t.Array(
    t.Object({ text: t.String(), at: t.String({ format: "date-time" }), accountId: t.String() }),
  ),
  status: t.UnionEnum(REPORT_STATUSES),
  votes: t.Integer(),
  accountId: t.String({ description: 'The first reporter ("system": the service itself)' }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  decidedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  decidedBy: t.Union([t.String(), t.Null()]),
};

export const ReportRecord = t.Object(ReportFields);

export const ReportView = t.Object({
  ...ReportFields,
  brand: t.Union([
    t.Object({
      slug: t.String(),
      name: t.String(),
      variants: t.Array(
        t.Object({ variant: VariantName, source: t.String(), sha256: t.String() }),
        { description: "The artwork served now, per variant" },
      ),
      artwork: t.Array(ArtworkSource, { description: "Provenance of the served artwork" }),
      pins: t.Array(PinView),
    }),
    t.Null(),
  ]),
});

export const ReportQueue = t.Object({ items: t.Array(ReportView), next });

export const AcceptBody = t.Optional(
  t.Object({
    pin: t.Optional(
      t.Boolean({ description: "Fetch the report's url now and pin it as the brand's artwork" }),
    ),
    variant: t.Optional(VariantName),
    url: t.Optional(
      t.String({ description: "Which of the report's urls to pin (default: the first)" }),
    ),
  }),
);

export const Accepted = t.Object({
  report: ReportRecord,
  pin: t.Union([PinView, t.Null()]),
});

export const ArtworkQuery = t.Object({
  why: t.Optional(t.String({ maxLength: 1000 })),
  keep: t.Optional(
    t.String({
      pattern: "^(color|mono|dark|light|icon|wordmark)(,(color|mono|dark|light|icon|wordmark))*$",
      description:
        "color and mono pins: comma-separated variants of the brand's own artwork that stay served (default none: the pin replaces them all)",
      error: "Invalid query parameter keep: a comma-separated list of variants",
    }),
  ),
});

export const BrandPatchBody = t.Object({
  name: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()])),
  brandColor: t.Optional(
    t.Union([t.String({ description: "6 hex digits, with or without #" }), t.Null()]),
  ),
  domains: t.Optional(
    t.Union([t.Array(t.String({ maxLength: 253 }), { maxItems: 100 }), t.Null()]),
  ),
  aliases: t.Optional(
    t.Union([t.Array(t.String({ maxLength: 200 }), { maxItems: 100 }), t.Null()]),
  ),
  why: t.Optional(t.String({ maxLength: 1000 })),
});

const AuditValue = t.Union(
  [
    t.Record(
      t.String(),
      t.Union([
        t.String(),
        t.Number(),
        t.Boolean(),
        t.Null(),
        t.Array(t.String()),
        t.Record(t.String(), t.String()),
      ]),
    ),
    t.Null(),
  ],
  {
    description:
      'The value before or after the change: artwork by its sha256 and source or origin (variants as `{ variant: "<sha256> <source>" }`), fields by their value, a pin with who set it and when',
  },
);

export const AuditEventView = t.Object({
  id: t.String(),
  brandId: t.Union([t.Integer(), t.Null()]),
  slug: t.Union([t.String(), t.Null()]),
  type: t.UnionEnum(AUDIT_TYPES),
  at: t.String({ format: "date-time" }),
  by: t.String({
    description:
      'Who: an operator (admin:<name>, admin:token-<8 hex>, cli:<user>@<host>), "discovery", "catalog" (a build) or "system" (a pin moved or reported after a build)',
  }),
  before: AuditValue,
  after: AuditValue,
  detail: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean(), t.Null()])),
});

export const AuditPage = t.Object({ items: t.Array(AuditEventView), next });

/** A brand's slug in an operator route's path. */
export const SlugParams = t.Object({ slug: t.String({ maxLength: 200 }) });

/** A brand's slug and one of its variants in an operator route's path. */
export const ArtworkParams = t.Object({ slug: t.String({ maxLength: 200 }), variant: VariantName });
