import type { Static } from "elysia";
import type { AccountService } from "../../accounts/service";
import { ApiError } from "../../http/errors";
import { utcDay } from "../../platform/day";
import { BUCKETS, type Bucket, DAILY_LIMITS } from "../../quota/limits";
import type { Principal } from "../../quota/principal";
import { CounterStoreUnavailable, type QuotaService } from "../../quota/service";
import type { UsageResponse } from "./model";

/** GET /v1/usage's answer (the UsageResponse schema). */
export type UsageReport = Static<typeof UsageResponse>;
type BucketUsage = UsageReport["endpoints"][Bucket];

/**
 * Today's counts and daily limits per bucket (GET /v1/usage). Reads counters only.
 * Limits: the tier table for free and pro; null for enterprise (custom contract limits) and
 * internal, as the spec says.
 */
export class CurrentUsageService {
  constructor(
    private quota: QuotaService,
    private accounts: Pick<AccountService, "getAccount">,
  ) {}

  /** 500 internal_error when the counter store does not answer (nothing to report from). */
  async report(principal: Principal, now = new Date()): Promise<UsageReport> {
    const keyIds = principal.keyId ? [principal.keyId] : await this.activeKeys(principal.accountId);
    const counts = await this.quota.counts(keyIds, now).catch((err) => {
      if (!(err instanceof CounterStoreUnavailable)) throw err;
      throw new ApiError(
        500,
        "internal_error",
        "Usage counters could not be read right now. Try again shortly.",
      );
    });
    const table =
      principal.tier === "free" || principal.tier === "pro" ? DAILY_LIMITS[principal.tier] : null;
    // used is the day's count as it is, also above the limit: after a mid-day downgrade, or
    // requests served while the counter store was down (fail open) and counted again since
    const endpoints = Object.fromEntries(
      BUCKETS.map((b) => [b, { used: counts[b], limit: table ? table[b] : null }]),
    ) as Record<Bucket, BucketUsage>;
    return { date: utcDay(now), tier: principal.tier, endpoints };
  }

  /** Bearer callers (no key in hand): the account's active keys, summed. */
  private async activeKeys(accountId: string): Promise<string[]> {
    const account = await this.accounts.getAccount(accountId);
    return account ? account.keys.filter((k) => !k.revokedAt).map((k) => k.id) : [];
  }
}
