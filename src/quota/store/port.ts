import type { Bucket } from "../limits";

/**
 * Storage port for quota and rate-limit counters. Two adapters: `MemoryCounterStore`
 * (one process) and `UpstashCounterStore` (Upstash Redis over HTTP, shared by every instance).
 * Both pass tests/quota/counter-store.contract.ts. Every key carries an absolute expiry
 * (`expireAt`, unix seconds); a counter past its expiry reads as 0.
 */
export interface CounterStore {
  readonly kind: "memory" | "upstash";
  /** true when the store lives across the network (calls are guarded by timeout + breaker) */
  readonly remote: boolean;
  /**
   * Atomic check-and-increment: when `limit` is null or the counter is below `limit`, add 1.
   * Returns whether it was added and the counter's value afterwards. A refused call changes
   * nothing (but the raise to `floor`), so a counter never passes its limit.
   */
  consume(
    key: string,
    limit: number | null,
    expireAt: number,
    opts?: ConsumeOptions,
  ): Promise<ConsumeResult>;
  /**
   * The same, answered synchronously: only stores in this process's memory have it (the
   * metered hot path then needs no promise at all).
   */
  consumeNow?(
    key: string,
    limit: number | null,
    expireAt: number,
    opts?: ConsumeOptions,
  ): ConsumeResult;
  /** subtract 1 (a refund), never below 0 */
  release(key: string): Promise<void>;
  /** current values, 0 for missing or expired keys, in the order asked */
  read(keys: string[]): Promise<number[]>;
  /** atomically, for every pair: add the value of `from` to `to` (`from` is left as it is) */
  addFrom(pairs: { from: string; to: string }[], expireAt: number): Promise<void>;
  /** atomically raise each counter to at least `value` (never lowers one) */
  raiseTo(entries: { key: string; value: number }[], expireAt: number): Promise<void>;
  close(): Promise<void>;
}

export interface ConsumeOptions {
  /** a key whose absence the answer reports (`seeded: false`): the day's seed mark */
  seedKey?: string;
  /**
   * first raise the counter to at least this (in the same atomic step): what the caller knows
   * was served already, so a store that lost its counters cannot count from 0 again
   */
  floor?: number;
}

export interface ConsumeResult {
  allowed: boolean;
  /** the counter after the call */
  count: number;
  /**
   * false when `seedKey` was asked about and is missing: the store has no counters seeded from
   * the usage log for the day (it restarted empty, or was never seeded); undefined otherwise
   */
  seeded?: boolean;
}

/** Every key this service writes starts with this, so one Redis can hold other data too. */
export const KEY_PREFIX = "bapi:";

/** Unix seconds of the UTC midnight that ends the day of `now`. */
export function dayEnd(now: Date): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000;
}

/**
 * Daily counters expire one hour after their UTC day ends: the day is part of the key, so the
 * hour only gives instances whose clocks lag a little a live key to write to.
 */
export const DAY_GRACE_SECONDS = 3600;

/** The daily counter of one API key and bucket on one UTC day. */
export const dailyKey = (day: string, keyId: string, bucket: Bucket): string =>
  `${KEY_PREFIX}q:${day}:${keyId}:${bucket}`;

/**
 * Set (to 1) by every counter rebuild from the usage log: its absence tells the service that the
 * store lost the day's counters (a Redis restarted empty), so they are seeded again.
 */
export const seedKey = (day: string): string => `${KEY_PREFIX}seeded:${day}`;

/** A short-window (rate limit) counter: policy name, window start (unix s), caller identity. */
export const windowKey = (policy: string, windowStart: number, identity: string): string =>
  `${KEY_PREFIX}rl:${policy}:${windowStart}:${identity}`;
