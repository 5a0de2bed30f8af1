import type { Config } from "../config";
import { CircuitBreaker, type CircuitBreakerOptions } from "./circuit-breaker";
import { RateLimiter } from "./rate-limit";
import { QuotaService } from "./service";
import { MemoryCounterStore } from "./store/memory";
import type { CounterStore } from "./store/port";
import { UpstashCounterStore } from "./store/upstash";

export interface Quotas {
  quota: QuotaService;
  limiter: RateLimiter;
}

/** Counter store from config: Upstash when UPSTASH_REDIS_REST_URL + token are set, else memory. */
export function createCounterStore(
  config: Pick<
    Config,
    "UPSTASH_REDIS_REST_URL" | "UPSTASH_REDIS_REST_TOKEN" | "COUNTER_TIMEOUT_MS"
  >,
): CounterStore {
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN)
    return new UpstashCounterStore({
      url: config.UPSTASH_REDIS_REST_URL,
      token: config.UPSTASH_REDIS_REST_TOKEN,
      timeoutMs: config.COUNTER_TIMEOUT_MS,
    });
  return new MemoryCounterStore();
}

/**
 * Daily quotas and short-window limits over one counter store. A remote store gets one guard
 * (timeout + circuit breaker) shared by both, so a dead store is noticed once.
 */
export function createQuotas(
  store: CounterStore,
  guard: Partial<CircuitBreakerOptions> & Pick<CircuitBreakerOptions, "timeoutMs">,
): Quotas {
  const g = store.remote ? new CircuitBreaker(guard) : null;
  return { quota: new QuotaService(store, g), limiter: new RateLimiter(store, g) };
}
