import { t } from "elysia";
import { BUCKETS, TIERS } from "../../quota/limits";

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
  from: day("from", "First UTC day, YYYY-MM-DD. Default: 29 days before `to` (30 days in all)."),
  to: day("to", "Last UTC day, YYYY-MM-DD (included). Default: today (UTC)."),
  bucket: t.Optional(bucket),
});

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
