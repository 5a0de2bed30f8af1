import { type CounterStore, windowKey } from "./counter-store";
import type { CounterGuard } from "./guard";
import type { RatePolicy } from "./limits";
import { MemoryCounterStore } from "./memory-store";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the current window ends (Retry-After when refused) */
  retryAfter: number;
}

/**
 * Short-window caps (per minute, per hour) in fixed windows aligned to the epoch, counted in the
 * same counter store as the daily quotas, so every instance shares one budget. These are safety
 * caps (password reset, verification mails), so when the shared store does not answer they are
 * not dropped: this instance counts on its own in memory until the store is back.
 */
export class RateLimiter {
  private local: MemoryCounterStore;

  constructor(
    private store: CounterStore,
    private guard: CounterGuard | null = null,
    private now: () => number = Date.now,
  ) {
    this.local = new MemoryCounterStore(now);
  }

  /** Count one request of `identity` (e.g. `account:<id>`, `ip:<addr>`) against `policy`. */
  async hit(policy: RatePolicy, identity: string): Promise<RateDecision> {
    const t = Math.floor(this.now() / 1000);
    const start = t - (t % policy.windowSeconds);
    const end = start + policy.windowSeconds;
    const key = windowKey(policy.name, start, identity);
    const op = () => this.store.consume(key, policy.limit, end + 60);
    let r = this.guard ? await this.guard.run(op) : { ok: true as const, value: await op() };
    if (!r.ok) r = { ok: true, value: await this.local.consume(key, policy.limit, end + 60) };
    return {
      allowed: r.value.allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - r.value.count),
      retryAfter: Math.max(1, end - t),
    };
  }

  /** Whether `identity` is still under `policy`'s cap in the current window, counting nothing. */
  async peek(policy: RatePolicy, identity: string): Promise<RateDecision> {
    const t = Math.floor(this.now() / 1000);
    const start = t - (t % policy.windowSeconds);
    const end = start + policy.windowSeconds;
    const key = windowKey(policy.name, start, identity);
    const op = () => this.store.read([key]);
    const r = this.guard ? await this.guard.run(op) : { ok: true as const, value: await op() };
    const count = Math.max(r.ok ? (r.value[0] ?? 0) : 0, (await this.local.read([key]))[0] ?? 0);
    return {
      allowed: count < policy.limit,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - count),
      retryAfter: Math.max(1, end - t),
    };
  }
}
