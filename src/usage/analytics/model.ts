import { t } from "elysia";
import { RateLimitedBody } from "../../http/errors";
import { jsonResponse } from "../../http/json-responses";
import { queryInt } from "../../http/params";
import { BUCKETS, TIERS } from "../../quota/limits";
import { OTHER_BRAND, TOP_BRANDS } from "./cells";
import { CSV_COLUMNS, EXPORT_MAX_LIMIT } from "./export";
import { MISS_KINDS, MISSES_DEFAULT_LIMIT, MISSES_MAX_LIMIT } from "./misses";
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
      description: `Only requests about this brand (its slug). Counts the days (hours) the brand was among the first ${TOP_BRANDS} brands of the account; "${OTHER_BRAND}": the brands past those, together`,
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

const EXAMPLE_COUNTS = { requests: 3, errors: 1, rateLimited: 0, p50: 1.2, p95: 4.1, p99: 4.1 };

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
            'The group\'s values joined by "/" ("(none)" for a missing value, "(bearer)" for a bearer-token caller, "(other brands)" for brand "(other)"), or "(other)"',
        }),
        other: t.Optional(
          t.Boolean({ description: "true on the row that sums the groups past `limit`" }),
        ),
        bucket: t.Optional(t.String()),
        key: nullable(t.String({ description: "API key id (null: bearer token)" })),
        brand: nullable(
          t.String({
            description: `Brand slug; "${OTHER_BRAND}": the brands of a day (hour) past the first ${TOP_BRANDS} the account used that day (hour), counted together`,
          }),
        ),
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
        totals: EXAMPLE_COUNTS,
        series: [{ t: "2025-01-31T00:00:00Z", ...EXAMPLE_COUNTS }],
        groups: [
          {
            id: "svg",
            bucket: "svg",
            ...EXAMPLE_COUNTS,
            series: [{ t: "2025-01-31T00:00:00Z", ...EXAMPLE_COUNTS }],
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

const range = {
  from: day("from", "First UTC day, YYYY-MM-DD. Default: 29 days before `to` (30 days in all)."),
  to: day("to", "Last UTC day, YYYY-MM-DD (included). Default: today (UTC)."),
};

export const ExportQuery = t.Object({
  ...range,
  cursor: t.Optional(
    t.String({
      maxLength: 64,
      description: "X-Next-Cursor of the previous page (an event id); omit for the first page",
      error:
        "Invalid query parameter cursor: must be an event id (X-Next-Cursor of the previous page)",
    }),
  ),
  format: t.Optional(
    t.Union([t.Literal("ndjson"), t.Literal("csv")], {
      description:
        "ndjson (default): one stored event per line; csv: a header line, then one row per event",
      error: "Invalid query parameter format: must be one of ndjson, csv",
    }),
  ),
  limit: t.Optional(queryInt("limit", 1, EXPORT_MAX_LIMIT)),
});

const EXPORT_HEADERS = {
  "X-Next-Cursor": {
    description: "Present when the page is full: pass it as `cursor` for the next page",
    schema: { type: "string" as const },
  },
};

/** OpenAPI responses of GET /v1/analytics/events (the 200 body is streamed text). */
export const exportResponses = {
  200: {
    description: "The page's events, oldest id first",
    headers: EXPORT_HEADERS,
    content: {
      "application/x-ndjson": {
        schema: { type: "string" as const },
        example:
          '{"id":"0194b1f0-8a1e-7c2d-9a4b-1c2d3e4f5a6b","ts":"2025-01-31T13:05:00.123Z","day":"2025-01-31","accountId":"acc_1","keyId":"key_1","tier":"pro","bucket":"svg","route":"/v1/svg/:slug","slug":"github","variant":"mono","format":"svg","status":200,"latencyMs":0.42}\n',
      },
      "text/csv": {
        schema: { type: "string" as const },
        example: `${CSV_COLUMNS.join(",")}\n0194b1f0-8a1e-7c2d-9a4b-1c2d3e4f5a6b,2025-01-31T13:05:00.123Z,2025-01-31,acc_1,key_1,pro,svg,/v1/svg/:slug,github,mono,svg,,200,0.42,\n`,
      },
    },
  },
  401: jsonResponse("invalid_api_key: missing or invalid credentials"),
  422: jsonResponse("validation_error: a bad from, to, cursor, format or limit"),
  429: jsonResponse("rate_limit_exceeded: 20 exports per minute per account", RateLimitedBody),
};

export const MissesQuery = t.Object({
  ...range,
  kind: t.Optional(
    t.Union(
      [
        t.Literal("domain"),
        t.Literal("email"),
        t.Literal("slug"),
        t.Literal("query"),
        t.Literal("transaction"),
      ],
      {
        description: `Only misses of this kind: ${MISS_KINDS.join(", ")}`,
        error: `Invalid query parameter kind: must be one of ${MISS_KINDS.join(", ")}`,
      },
    ),
  ),
  limit: t.Optional(queryInt("limit", 1, MISSES_MAX_LIMIT, MISSES_DEFAULT_LIMIT)),
});

export const MissesResponse = t.Object(
  {
    from: t.String({ description: "First day of the range (UTC), YYYY-MM-DD" }),
    to: t.String({ description: "Last day of the range (UTC), YYYY-MM-DD" }),
    misses: t.Array(
      t.Object({
        kind: t.String({
          description:
            "domain (GET /v1/brand?domain= without a brand), email (the domain of an address without a brand; never its local part), slug (unknown slug, or a brand served as a placeholder), query (a search without result, normalised), transaction (the merchant of a card-statement descriptor no brand matched, folded to lower case)",
        }),
        value: t.String(),
        count: t.Integer({ minimum: 1, description: "Requests that missed it in the range" }),
      }),
      { description: "Most requested first (ties by kind, then value)" },
    ),
  },
  {
    examples: [
      {
        from: "2025-01-01",
        to: "2025-01-30",
        misses: [
          { kind: "domain", value: "acme.test", count: 42 },
          { kind: "query", value: "acme corp", count: 7 },
        ],
      },
    ],
  },
);
