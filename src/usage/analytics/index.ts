import { Elysia, t } from "elysia";
import { type RateLimitDeps, rateLimitPlugin } from "../../guard";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { documentedResponses, JSON_TYPE, preSerialized } from "../../http/json-responses";
import { decimalQuery } from "../../http/params";
import { RATE_LIMITS } from "../../quota/limits";
import type { UsageLog } from "../log/port";
import { TOP_BRANDS } from "./cells";
import { exportPage } from "./export";
import { MISSES_DESCRIPTION, rankedMisses } from "./misses";
import {
  AnalyticsQuery,
  AnalyticsResponse,
  AnalyticsSeriesResponse,
  ExportQuery,
  exportResponses,
  MissesQuery,
  MissesResponse,
} from "./model";
import { usageSeries, wantsSeries } from "./series";
import { usageHistory } from "./service";

const UsageAnswer = t.Union([AnalyticsResponse, AnalyticsSeriesResponse], {
  description:
    "The per-day history (AnalyticsResponse), or with any of granularity, group_by, key, brand, limit the series answer (AnalyticsSeriesResponse)",
});

/**
 * GET /v1/analytics/usage (history per day and bucket, or chart series), /v1/analytics/events
 * (raw events export) and /v1/analytics/misses (what the account asked for in vain).
 */
export function analyticsController(
  deps: RateLimitDeps & {
    usage: UsageLog;
    exportSettleMs: number;
    /** USAGE_HOURLY_DAYS: how far back granularity=hour answers */
    hourlyDays?: number;
  },
) {
  return new Elysia({ prefix: "/v1/analytics", tags: ["usage"] })
    .use(rateLimitPlugin(deps))
    .use(decimalQuery)
    .get(
      "/usage",
      async ({ principal, query, set }) => {
        const body = wantsSeries(query)
          ? await usageSeries(deps.usage, principal, query, new Date(), deps.hourlyDays)
          : await usageHistory(deps.usage, principal, query);
        // sent as text: a year of series is thousands of objects, and checking and cleaning
        // them against the schema cost several times the query (the tests check every
        // answer against the OpenAPI document instead)
        set.headers["content-type"] = JSON_TYPE;
        return JSON.stringify(body) as unknown as typeof body;
      },
      {
        accountRateLimit: RATE_LIMITS.analyticsUsage,
        query: AnalyticsQuery,
        decimalQuery: AnalyticsQuery,
        response: {
          200: preSerialized(UsageAnswer),
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
            "at most 7 days, default the day `to`; hours are kept for the last USAGE_HOURLY_DAYS days, " +
            "90 by default: older ones answer 422), zero-filled, ready for a chart library's time " +
            "axis. group_by=one or two of bucket, key, brand, variant, format, status (exact " +
            "code), status_class (2xx, 3xx, 4xx, 429, 5xx) splits the traffic into `groups`, each " +
            "with totals and its own series: the top `limit` (1..100, default 10) by requests, then " +
            "an `(other)` row summing the rest. key=, bucket= and brand= keep only that API key, " +
            "bucket or brand slug. Latency quantiles (ms) come from fixed log-scale histograms " +
            "(bins 20% wide: within about 10% of the exact value); a folded burst of 429 refusals " +
            "counts each refusal. brand is the slug a request was about (GET /v1/brand: the brand " +
            "resolved); format the image format of svg/png/webp requests. Brands are kept per UTC " +
            `day (hour) up to the first ${TOP_BRANDS} brands the account used in it; the later ones of that ` +
            'day (hour) count together as brand "(other)" (group id "(other brands)"), so totals ' +
            "stay exact and brand= of such a brand counts only its own days (hours). A bad group_by, limit " +
            "or granularity: 422 validation_error.\n\n" +
            "Consumes no quota bucket; limited to 60 requests per minute per account (429 " +
            "rate_limit_exceeded with Retry-After).",
          security: [{ apiKey: [] }, { bearer: [] }],
          responses: documentedResponses({
            200: UsageAnswer,
            401: ErrorBody,
            422: ErrorBody,
            429: RateLimitedBody,
          }),
        },
      },
    )
    .get(
      "/events",
      async ({ principal, query, set }) => {
        const page = await exportPage(deps.usage, principal.accountId, query, deps.exportSettleMs);
        set.headers["content-type"] = page.contentType;
        set.headers["cache-control"] = "no-store";
        if (page.next) set.headers["x-next-cursor"] = page.next;
        return new Response(page.body, { headers: { "content-type": page.contentType } });
      },
      {
        accountRateLimit: RATE_LIMITS.analyticsEvents,
        query: ExportQuery,
        decimalQuery: ExportQuery,
        response: { 401: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Export the account's raw usage events (NDJSON or CSV)",
          description:
            "Accepts X-API-Key or Authorization: Bearer. Streams the account's usage events of " +
            "the UTC days `from`..`to` (default the 30 days ending today, at most 366), oldest " +
            "first (by event id, which is time-ordered), `limit` per page (1..50000, default " +
            "10000). A full page carries X-Next-Cursor: pass it as `cursor` to read on; a page " +
            "without it is the last. Only events metered at least USAGE_EXPORT_SETTLE_MS ago " +
            "(30 s by default) are listed: a request's event is written when it ends, so events " +
            "appended while a client pages through are neither skipped nor repeated; to follow " +
            "new events later, pass the last id read as `cursor`. format=ndjson (default: each " +
            "line the stored event as JSON) or csv (a header line; text that a spreadsheet " +
            "would read as a formula gets a leading apostrophe). Consumes no quota bucket; " +
            "limited to 20 requests per minute per account (429 rate_limit_exceeded with " +
            "Retry-After). A bad cursor, format or limit: 422 validation_error.",
          security: [{ apiKey: [] }, { bearer: [] }],
          responses: exportResponses,
        },
      },
    )
    .get(
      "/misses",
      ({ principal, query }) => rankedMisses(deps.usage, principal.accountId, query),
      {
        accountRateLimit: RATE_LIMITS.analyticsMisses,
        query: MissesQuery,
        decimalQuery: MissesQuery,
        response: { 200: MissesResponse, 401: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Brands, domains and searches the account asked for in vain",
          description: `${MISSES_DESCRIPTION} Accepts X-API-Key or Authorization: Bearer. Consumes no quota bucket; limited to 60 requests per minute per account.`,
          security: [{ apiKey: [] }, { bearer: [] }],
        },
      },
    );
}
