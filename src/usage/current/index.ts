import { Elysia } from "elysia";
import type { AccountService } from "../../accounts/service";
import { type RateLimitDeps, rateLimitPlugin } from "../../guard";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { RATE_LIMITS } from "../../quota/limits";
import type { QuotaService } from "../../quota/service";
import { UsageResponse } from "./model";
import { CurrentUsageService } from "./service";

/** GET /v1/usage: today's counts and limits per bucket for the caller. */
export function usageCurrentController(
  deps: RateLimitDeps & { accounts: AccountService; quota: QuotaService },
) {
  const usage = new CurrentUsageService(deps.quota, deps.accounts);
  return new Elysia({ tags: ["usage"] }).use(rateLimitPlugin(deps)).get(
    "/v1/usage",
    async ({ principal, set }) => {
      set.headers["cache-control"] = "no-store";
      return usage.report(principal);
    },
    {
      accountRateLimit: RATE_LIMITS.usage,
      response: { 200: UsageResponse, 401: ErrorBody, 429: RateLimitedBody, 500: ErrorBody },
      detail: {
        summary: "Today's usage and daily limits per bucket",
        description:
          "Counts of today's (UTC) requests per bucket for the calling API key (with a bearer token: the account's active keys) and the tier's daily caps. Reads counters only and consumes no bucket. " +
          "What counts: every authenticated request to a metered route, except ones refused with 429 and server errors. used is the day's count as it is: it can exceed limit after a mid-day downgrade, or when requests were served while the counter store was unavailable (quotas fail open). " +
          "limit is null when the bucket has no cap, and always null for the enterprise (custom contract limits) and internal tiers. " +
          "Pro limits follow the spec's tier table (search 500, catalog uncapped, batch 50 calls). " +
          "Accepts X-API-Key or Authorization: Bearer. At most 60 requests per minute per account (per client IP without valid credentials): 429 rate_limit_exceeded with Retry-After. " +
          "500 internal_error when the counter store cannot be read.",
        security: [{ apiKey: [] }, { bearer: [] }],
      },
    },
  );
}
