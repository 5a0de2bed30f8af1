import type { Principal } from "../../accounts/model";
import type { AccountService } from "../../accounts/service";
import { utcDay } from "../../quota/counter-store";
import { BUCKETS, type Bucket, DAILY_LIMITS, type Tier } from "../../quota/limits";
import type { QuotaService } from "../../quota/service";

export interface BucketUsage {
  used: number;
  limit: number | null;
}

export interface UsageReport {
  date: string;
  tier: Tier;
  endpoints: Record<Bucket, BucketUsage>;
}

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

  /** Throws CounterStoreUnavailable when the counter store does not answer. */
  async report(principal: Principal, now = new Date()): Promise<UsageReport> {
    const keyIds = principal.keyId ? [principal.keyId] : await this.activeKeys(principal.accountId);
    const counts = await this.quota.counts(keyIds, now);
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
