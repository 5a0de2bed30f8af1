import { BUCKETS } from "../quota/limits";
import type { UsageEvent } from "./event";
import type { DailyCounts } from "./log/port";

/**
 * The usage_daily rules, shared by both adapters and the history route:
 *  - requests: every event (every metered request that passed authentication);
 *  - errors: status >= 400 except 429 (a client error such as 404 service_not_found, or a
 *    server error);
 *  - rateLimited: status 429 (refused before the handler; it consumed no quota).
 */

export const zeroCounts = (): DailyCounts => ({ requests: 0, errors: 0, rateLimited: 0 });

export function addCounts(into: DailyCounts, more: DailyCounts): void {
  into.requests += more.requests;
  into.errors += more.errors;
  into.rateLimited += more.rateLimited;
}

const BUCKET_SET = new Set<string>(BUCKETS);
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A line of an earlier version's files (JSONL day files, spill files) is a usage event only if
 * it has the fields the projections use.
 */
export function isUsageEvent(v: unknown): v is UsageEvent {
  const e = v as Partial<UsageEvent> | null;
  return (
    !!e &&
    typeof e === "object" &&
    typeof e.id === "string" &&
    typeof e.accountId === "string" &&
    typeof e.ts === "string" &&
    typeof e.day === "string" &&
    DAY.test(e.day) &&
    typeof e.bucket === "string" &&
    BUCKET_SET.has(e.bucket) &&
    typeof e.status === "number" &&
    (e.count === undefined || (Number.isInteger(e.count) && e.count >= 1))
  );
}
