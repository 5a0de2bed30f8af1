import type { Bucket } from "./limits";
import type { Principal } from "./principal";

/** Outcome of a quota check-and-consume for one metered request. */
export interface QuotaDecision {
  allowed: boolean;
  /** the daily cap for the caller's tier, null when uncapped */
  limit: number | null;
  /** requests left today after this one, null when uncapped */
  remaining: number | null;
  /** seconds until the next UTC midnight */
  resetSeconds: number;
  /**
   * whether this request was added to a counter (false when refused, or when the counter store
   * did not answer and the request is served unenforced); only counted requests are refunded
   */
  counted?: boolean;
}

/** The gate every metered route passes through. Implementation: QuotaService (quota/service.ts). */
export interface QuotaGate {
  /** a decision, synchronous when the counter store is in this process */
  consume(principal: Principal, bucket: Bucket, now?: Date): QuotaDecision | Promise<QuotaDecision>;
  /** give back one unit (the request ended in a server error) */
  refund(principal: Principal, bucket: Bucket, now?: Date): Promise<void>;
}

export function secondsToUtcMidnight(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** A gate that never refuses (used until a counter store is wired in). */
export const unlimitedGate: QuotaGate = {
  async consume(_p, _b, now) {
    return {
      allowed: true,
      limit: null,
      remaining: null,
      resetSeconds: secondsToUtcMidnight(now),
      counted: false,
    };
  },
  async refund() {},
};

/** One usage event, as much of it as a counter rebuild needs (see usage/event.ts UsageEvent). */
export interface CountableEvent {
  keyId: string;
  accountId?: string;
  bucket: Bucket;
  /** UTC day, YYYY-MM-DD */
  day: string;
  status: number;
  /** how many such events this stands for (a store's per-day tally); 1 when absent */
  events?: number;
}
