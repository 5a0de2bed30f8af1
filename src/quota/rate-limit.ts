import type { CircuitBreaker } from "./circuit-breaker";
import type { RatePolicy } from "./limits";
import { MemoryCounterStore } from "./store/memory";
import { type CounterStore, KEY_PREFIX, windowKey } from "./store/port";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the current window ends (Retry-After when refused) */
  retryAfter: number;
}

/**
 * Growing delays after repeated failures of one identity (logins): the first `free` failures in
 * a window cost nothing; each one after that makes the identity wait 1 s, then 2, 4, 8... (at
 * most `maxDelaySeconds`) before its next attempt. Failures are counted in fixed windows aligned
 * to the epoch, so the delays start over when the window ends.
 */
export interface BackoffPolicy {
  name: string;
  free: number;
  windowSeconds: number;
  maxDelaySeconds: number;
}

/** The delay after the `failures`-th failure of a window, in ms (0 while free). */
export function backoffDelayMs(policy: BackoffPolicy, failures: number): number {
  if (failures <= policy.free) return 0;
  const exponent = Math.min(failures - policy.free - 1, 30);
  return Math.min(2 ** exponent, policy.maxDelaySeconds) * 1000;
}

/** Until when (unix ms) an identity must wait under a backoff policy. */
const waitKey = (policy: string, identity: string) => `${KEY_PREFIX}wait:${policy}:${identity}`;

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
    private breaker: CircuitBreaker | null = null,
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
    let r = this.breaker ? await this.breaker.run(op) : { ok: true as const, value: await op() };
    if (!r.ok) r = { ok: true, value: await this.local.consume(key, policy.limit, end + 60) };
    return {
      allowed: r.value.allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - r.value.count),
      retryAfter: Math.max(1, end - t),
    };
  }

  /**
   * Runs `op` on the shared store; when it does not answer, on this instance's memory (these
   * are safety caps: never dropped).
   */
  private async shared<T>(op: (store: CounterStore) => Promise<T>): Promise<T> {
    const r = this.breaker
      ? await this.breaker.run(() => op(this.store))
      : { ok: true as const, value: await op(this.store) };
    return r.ok ? r.value : op(this.local);
  }

  /** Milliseconds `identity` must still wait under `policy` before its next attempt (0: none). */
  async waitLeft(policy: BackoffPolicy, identity: string): Promise<number> {
    const key = waitKey(policy.name, identity);
    const [shared] = await this.shared((s) => s.read([key]));
    const [local] = await this.local.read([key]);
    return Math.max(0, Math.max(shared ?? 0, local ?? 0) - this.now());
  }

  /** Count one failure of `identity`; answers the delay it now has to wait, in ms. */
  async failed(policy: BackoffPolicy, identity: string): Promise<number> {
    const nowMs = this.now();
    const t = Math.floor(nowMs / 1000);
    const start = t - (t % policy.windowSeconds);
    const end = start + policy.windowSeconds;
    const counter = windowKey(policy.name, start, identity);
    const { count } = await this.shared((s) => s.consume(counter, null, end + 60));
    const delay = backoffDelayMs(policy, count);
    if (delay > 0) {
      const until = nowMs + delay;
      const entry = [{ key: waitKey(policy.name, identity), value: until }];
      await this.shared((s) => s.raiseTo(entry, Math.ceil(until / 1000) + 60));
    }
    return delay;
  }

  /** Whether `identity` is still under `policy`'s cap in the current window, counting nothing. */
  async peek(policy: RatePolicy, identity: string): Promise<RateDecision> {
    const t = Math.floor(this.now() / 1000);
    const start = t - (t % policy.windowSeconds);
    const end = start + policy.windowSeconds;
    const key = windowKey(policy.name, start, identity);
    const op = () => this.store.read([key]);
    const r = this.breaker ? await this.breaker.run(op) : { ok: true as const, value: await op() };
    const count = Math.max(r.ok ? (r.value[0] ?? 0) : 0, (await this.local.read([key]))[0] ?? 0);
    return {
      allowed: count < policy.limit,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - count),
      retryAfter: Math.max(1, end - t),
    };
  }
}
