import { t } from "elysia";
import { queryInt } from "../../http/params";
import { BUCKETS, TIERS } from "../../quota/limits";
import { GROUP_FIELDS, MAX_LIMIT } from "./series";

const day = (name: string, description: string) =>
  t.Optional(
    t.String({
      pattern: "^\\d{4}-\\d{2}-\\d{2}$",
      description,
      examples: ["2025-01-31"],
      error: `Invalid query parameter ${name}: must be a date YYYY-MM-DD`,
    }),
  );

// explicit literals: Elysia fills a missing optional t.UnionEnum query value with its first member
const bucketUnion = (options: { description?: string; error?: string } = {}) =>
  t.Union(
    [
      t.Literal("svg"),
      t.Literal("png"),
      t.Literal("webp"),
      t.Literal("catalog"),
      t.Literal("search"),
      t.Literal("domain"),
      t.Literal("batch"),
    ],
    options,
  );
const bucket = bucketUnion({
  description: `Only this bucket: one of ${BUCKETS.join(", ")}`,
  error: `Invalid query parameter bucket: must be one of ${BUCKETS.join(", ")}`,
});

export const AnalyticsQuery = t.Object({
  from: day(
    "from",
    "First UTC day, YYYY-MM-DD. Default: 29 days before `to` (30 days in all); with granularity=hour, `to` itself.",
  ),
  to: day("to", "Last UTC day, YYYY-MM-DD (included). Default: today (UTC)."),
  bucket: t.Optional(bucket),
  granularity: t.Optional(
    t.Union([t.Literal("day"), t.Literal("hour")], {
      description: "day (default) or hour (a range of at most 7 days)",
      error: "Invalid query parameter granularity: must be one of day, hour",
    }),
  ),
  group_by: t.Optional(
    t.String({
      maxLength: 40,
      description: `One or two of ${GROUP_FIELDS.join(", ")}, comma-separated (e.g. bucket,status_class)`,
      examples: ["bucket", "brand,status_class"],
      error: `Invalid query parameter group_by: one or two of ${GROUP_FIELDS.join(", ")}, comma-separated`,
    }),
  ),
  key: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 100,
      description: "Only requests made with this API key (its id, as GET /v1/keys lists it)",
      error: "Invalid query parameter key: must be an API key id of 1 to 100 characters",
    }),
  ),
  brand: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 200,
      description: "Only requests about this brand (its slug)",
      examples: ["github"],
      error: "Invalid query parameter brand: must be a slug of 1 to 200 characters",
    }),
  ),
  limit: t.Optional(queryInt("limit", 1, MAX_LIMIT)),
});

const quantiles = {
  p50: t.Union([t.Number(), t.Null()], {
    description: "Median latency in ms (null without requests)",
  }),
  p95: t.Union([t.Number(), t.Null()], { description: "95th percentile latency in ms" }),
  p99: t.Union([t.Number(), t.Null()], { description: "99th percentile latency in ms" }),
};
const seriesCounts = {
  requests: t.Integer({ minimum: 0, description: "Metered requests" }),
  errors: t.Integer({ minimum: 0, description: "Answered 4xx/5xx other than 429" }),
  rateLimited: t.Integer({ minimum: 0, description: "Refused with 429" }),
  ...quantiles,
};
const Point = t.Object(
  {
    t: t.String({
      description: "Start of the UTC day or hour, ISO 8601 (e.g. 2025-01-31T13:00:00Z)",
    }),
    ...seriesCounts,
  },
  { description: "Counts and latency of one day or hour" },
);
const Series = t.Array(Point, {
  description: "One point per day or hour of the range, oldest first, zero-filled",
});
const nullable = (schema: ReturnType<typeof t.String>) => t.Optional(t.Union([schema, t.Null()]));

export const AnalyticsSeriesResponse = t.Object(
  {
    tier: t.UnionEnum(TIERS, { description: "The account's current tier" }),
    from: t.String({ description: "First day of the range (UTC), YYYY-MM-DD" }),
    to: t.String({ description: "Last day of the range (UTC), YYYY-MM-DD" }),
    granularity: t.UnionEnum(["day", "hour"]),
    groupBy: t.Array(t.String(), { description: "The group_by fields, in the order given" }),
    filters: t.Object({
      key: t.Union([t.String(), t.Null()]),
      bucket: t.Union([bucketUnion(), t.Null()]),
      brand: t.Union([t.String(), t.Null()]),
    }),
    totals: t.Object(seriesCounts, { description: "Over the whole range (after the filters)" }),
    series: Series,
    groups: t.Array(
      t.Object({
        id: t.String({
          description:
            'The group\'s values joined by "/" ("(none)" for a missing value, "(bearer)" for a bearer-token caller), or "(other)"',
        }),
        other: t.Optional(
          t.Boolean({ description: "true on the row that sums the groups past `limit`" }),
        ),
        bucket: t.Optional(t.String()),
        key: nullable(t.String({ description: "API key id (null: bearer token)" })),
        brand: nullable(t.String({ description: "Brand slug" })),
        variant: nullable(t.String()),
        format: nullable(t.String({ description: "Image format (svg, png, webp)" })),
        status: t.Optional(t.Integer({ description: "Exact HTTP status" })),
        status_class: t.Optional(t.String({ description: "2xx, 3xx, 4xx, 429 or 5xx" })),
        ...seriesCounts,
        series: Series,
      }),
      {
        description:
          "With group_by: the top `limit` groups by requests (ties by id), then one (other) row for the rest; empty without group_by",
      },
    ),
  },
  {
    description: "Usage as chart series over the range, with optional groups",
    examples: [
      {
        tier: "pro",
        from: "2025-01-31",
        to: "2025-01-31",
        granularity: "day",
        groupBy: ["bucket"],
        filters: { key: null, bucket: null, brand: null },
        totals: { requests: 3, errors: 1, rateLimited: 0, p50: 1.2, p95: 4.1, p99: 4.1 },
        series: [
          {
            t: "2025-01-31T00:00:00Z",
            requests: 3,
            errors: 1,
            rateLimited: 0,
            p50: 1.2,
            p95: 4.1,
            p99: 4.1,
          },
        ],
        groups: [
          {
            id: "svg",
            bucket: "svg",
            requests: 3,
            errors: 1,
            rateLimited: 0,
            p50: 1.2,
            p95: 4.1,
            p99: 4.1,
            series: [
              {
                t: "2025-01-31T00:00:00Z",
                requests: 3,
                errors: 1,
                rateLimited: 0,
                p50: 1.2,
                p95: 4.1,
                p99: 4.1,
              },
            ],
          },
        ],
      },
    ],
  },
);

export const Counts = t.Object({
  requests: t.Integer({
    minimum: 0,
    description: "Metered requests that passed authentication, whatever their outcome",
  }),
  errors: t.Integer({
    minimum: 0,
    description: "Requests answered with a 4xx or 5xx status other than 429",
  }),
  rateLimited: t.Integer({
    minimum: 0,
    description: "Requests refused with 429 (daily quota exhausted)",
  }),
});

const C = t.Optional(Counts);
const BucketCounts = t.Object(
  { svg: C, png: C, webp: C, catalog: C, search: C, domain: C, batch: C },
  {
    description:
      "Counts per endpoint bucket: all seven buckets, or only the one asked for with `bucket`",
  },
);

export const AnalyticsResponse = t.Object(
  {
    tier: t.UnionEnum(TIERS, { description: "The account's current tier" }),
    from: t.String({ description: "First day of the range (UTC), YYYY-MM-DD" }),
    to: t.String({ description: "Last day of the range (UTC), YYYY-MM-DD" }),
    bucket: t.Union([bucketUnion(), t.Null()], {
      description: "The bucket filter, null when all buckets are listed",
    }),
    days: t.Array(
      t.Object({
        date: t.String({ description: "UTC day, YYYY-MM-DD" }),
        buckets: BucketCounts,
      }),
      {
        description:
          "One entry per day from `from` to `to`, oldest first; days without use are zero",
      },
    ),
    totals: BucketCounts,
  },
  { description: "Usage per UTC day and bucket over the range, with totals" },
);
