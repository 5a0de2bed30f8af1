import { t } from "elysia";
import { ArtworkSource, VariantName } from "../catalog/model";
import { queryInt } from "../http/params";
import { AUDIT_TYPES, REPORT_KINDS, REPORT_STATUSES } from "./port";
import { NOTE_MAX } from "./service";

/**
 * POST /v1/reports. `kind`, `url` and `note` are checked by the service (400 invalid_report
 * naming the field), so their rules are described here rather than enforced by the schema.
 */
export const ReportBody = t.Object({
  slug: t.Optional(t.String({ maxLength: 200, description: "The brand's slug (or domain)" })),
  domain: t.Optional(t.String({ maxLength: 253, description: "A domain of the brand (or slug)" })),
  kind: t.String({
    description: `One of ${REPORT_KINDS.join(", ")}`,
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
  slug: t.String(),
  kind: t.UnionEnum(REPORT_KINDS),
  status: t.UnionEnum(REPORT_STATUSES),
  votes: t.Integer({ description: "Reports of the same brand, kind and url while open" }),
});

export const AuditQuery = t.Object({ limit: t.Optional(queryInt("limit", 1, 1000, 100)) });

export const ReportStatusQuery = t.Object({
  // explicit literals: Elysia fills a missing optional t.UnionEnum query value with its first member
  status: t.Optional(t.Union([t.Literal("open"), t.Literal("accepted"), t.Literal("rejected")])),
  limit: t.Optional(queryInt("limit", 1, 500, 100)),
});

const PinValue = t.Union([
  t.String(),
  t.Array(t.String()),
  t.Object({
    sha256: t.String(),
    origin: t.String({ description: '"upload", or the URL the artwork was fetched from' }),
    derived: t.Array(t.String(), { description: "Variants derived from the pinned mark" }),
  }),
]);

export const PinView = t.Object({
  slug: t.String(),
  brandId: t.Integer(),
  field: t.String({ description: "artwork:<variant>, name, brandColor, domains or aliases" }),
  value: PinValue,
  by: t.String({ description: "The operator (the token's label, X-Operator when sent)" }),
  at: t.String({ format: "date-time" }),
  why: t.Union([t.String(), t.Null()]),
});

const ReportFields = {
  id: t.String(),
  brandId: t.Integer(),
  slug: t.String(),
  kind: t.UnionEnum(REPORT_KINDS),
  url: t.Union([t.String(), t.Null()]),
  note: t.Union([t.String(), t.Null()]),
  status: t.UnionEnum(REPORT_STATUSES),
  votes: t.Integer(),
  accountId: t.String(),
  createdAt: t.String({ format: "date-time" }),
  decidedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  decidedBy: t.Union([t.String(), t.Null()]),
};

export const ReportRecord = t.Object(ReportFields);

export const ReportView = t.Object({
  ...ReportFields,
  brand: t.Union([
    t.Object({
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

export const AcceptBody = t.Optional(
  t.Object({
    pin: t.Optional(
      t.Boolean({ description: "Fetch the report's url now and pin it as the brand's artwork" }),
    ),
    variant: t.Optional(VariantName),
  }),
);

export const Accepted = t.Object({
  report: ReportRecord,
  pin: t.Union([PinView, t.Null()]),
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

export const AuditEventView = t.Object({
  id: t.String(),
  brandId: t.Union([t.Integer(), t.Null()]),
  slug: t.Union([t.String(), t.Null()]),
  type: t.UnionEnum(AUDIT_TYPES),
  at: t.String({ format: "date-time" }),
  by: t.String(),
  detail: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean(), t.Null()])),
});
