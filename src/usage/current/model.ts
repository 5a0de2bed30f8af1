import { t } from "elysia";
import { TierSchema } from "../../accounts/model";
import { BUCKETS } from "../../quota/limits";

const BucketUsage = t.Object({
  used: t.Integer({
    minimum: 0,
    description:
      "Requests counted today (UTC) on the bucket. Can exceed limit: after a mid-day downgrade, or when requests were served while the counter store was unavailable (quotas fail open)",
  }),
  limit: t.Union([t.Integer({ minimum: 0 }), t.Null()], {
    description: "Daily cap; null means unlimited (and always null for enterprise and internal)",
  }),
});

export const UsageResponse = t.Object(
  {
    date: t.String({ format: "date", description: "UTC date, YYYY-MM-DD" }),
    tier: TierSchema,
    endpoints: t.Object(
      Object.fromEntries(BUCKETS.map((b) => [b, BucketUsage])) as Record<
        (typeof BUCKETS)[number],
        typeof BucketUsage
      >,
    ),
  },
  { description: "Today's usage and daily limit per bucket" },
);
