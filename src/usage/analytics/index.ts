import { Elysia } from "elysia";
import { ErrorBody, RateLimitedBody } from "../../catalog/model";
import { type RateLimitDeps, rateLimitPlugin } from "../../http/auth";
import { RATE_LIMITS } from "../../quota/limits";
import type { UsageEventStore } from "../port";
import { AnalyticsQuery, AnalyticsResponse } from "./model";
import { usageHistory } from "./service";

/** GET /v1/analytics/usage: the account's usage history per UTC day and bucket. */
export function analyticsController(deps: RateLimitDeps & { usage: UsageEventStore }) {
  return new Elysia({ prefix: "/v1/analytics", tags: ["usage"] })
    .use(rateLimitPlugin(deps))
    .get("/usage", ({ principal, query }) => usageHistory(deps.usage, principal, query), {
      accountRateLimit: RATE_LIMITS.analyticsUsage,
      query: AnalyticsQuery,
      response: { 200: AnalyticsResponse, 401: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
      detail: {
        summary: "Usage history per day and endpoint bucket",
        description:
          "Accepts X-API-Key or Authorization: Bearer. Lists every UTC day from `from` to `to` " +
          "(both included; default the 30 days ending today) with counts per bucket, zero-filled, " +
          "and totals over the range. Counts cover the whole account: every API key it has or had. " +
          "`requests` counts every metered request that passed authentication, `errors` those " +
          "answered 4xx/5xx other than 429, `rateLimited` the 429 refusals. Read from the " +
          "usage_daily projection, which trails live traffic by at most a flush interval " +
          "(USAGE_FLUSH_MS, 250 ms by default). A range longer than 366 days, `to` before " +
          "`from`, or a date that is not a real YYYY-MM-DD: 422 validation_error. " +
          "Consumes no quota bucket; limited to 60 requests per minute per account (429 " +
          "rate_limit_exceeded with Retry-After).",
        security: [{ apiKey: [] }, { bearer: [] }],
      },
    });
}
