import { Elysia, t } from "elysia";
import { ErrorBody, RateLimitedBody } from "../../catalog/model";
import { type RateLimitDeps, rateLimitPlugin } from "../../http/auth";
import { decimalQuery } from "../../http/params";
import { RATE_LIMITS } from "../../quota/limits";
import type { UsageEventStore } from "../port";
import { AnalyticsQuery, AnalyticsResponse, AnalyticsSeriesResponse } from "./model";
import { usageSeries, wantsSeries } from "./series";
import { usageHistory } from "./service";

/** GET /v1/analytics/usage: the account's usage history per UTC day and bucket. */
export function analyticsController(deps: RateLimitDeps & { usage: UsageEventStore }) {
  return new Elysia({ prefix: "/v1/analytics", tags: ["usage"] })
    .use(rateLimitPlugin(deps))
    .use(decimalQuery)
    .get(
      "/usage",
      ({ principal, query }) =>
        wantsSeries(query)
          ? usageSeries(deps.usage, principal, query)
          : usageHistory(deps.usage, principal, query),
      {
        accountRateLimit: RATE_LIMITS.analyticsUsage,
        query: AnalyticsQuery,
        decimalQuery: AnalyticsQuery,
        response: {
          200: t.Union([AnalyticsResponse, AnalyticsSeriesResponse]),
          401: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
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
            "`from`, or a date that is not a real YYYY-MM-DD: 422 validation_error.\n\n" +
            "Series answer (AnalyticsSeriesResponse) as soon as any of granularity, group_by, key, " +
            "brand or limit is given: `series` holds one point `{t, requests, errors, rateLimited, " +
            "p50, p95, p99}` per UTC day (granularity=day, the default) or hour (granularity=hour: " +
            "at most 7 days, default the day `to`), zero-filled, ready for a chart library's time " +
            "axis. group_by=one or two of bucket, key, brand, variant, format, status (exact " +
            "code), status_class (2xx, 3xx, 4xx, 429, 5xx) splits the traffic into `groups`, each " +
            "with totals and its own series: the top `limit` (1..100, default 10) by requests, then " +
            "an `(other)` row summing the rest. key=, bucket= and brand= keep only that API key, " +
            "bucket or brand slug. Latency quantiles (ms) come from fixed log-scale histograms " +
            "(bins 20% wide: within about 10% of the exact value); a folded burst of 429 refusals " +
            "counts each refusal. brand is the slug a request was about (GET /v1/brand: the brand " +
            "resolved); format the image format of svg/png/webp requests. A bad group_by, limit " +
            "or granularity: 422 validation_error.\n\n" +
            "Consumes no quota bucket; limited to 60 requests per minute per account (429 " +
            "rate_limit_exceeded with Retry-After).",
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    );
}
