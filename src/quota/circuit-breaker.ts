import {
  BrokenCircuitError,
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleAll,
  type IBackoff,
  type IBackoffFactory,
  noJitterGenerator,
  TaskCancelledError,
  type TimeoutPolicy,
  TimeoutStrategy,
  timeout,
} from "cockatiel";
import { log } from "../platform/log";
import { counterStoreCalls, counterStoreDuration } from "../platform/process-metrics";

export interface CircuitBreakerOptions {
  /** a call that has not answered by then counts as a failure (COUNTER_TIMEOUT_MS) */
  timeoutMs: number;
  /** consecutive failures that open the breaker */
  failureThreshold?: number;
  /** first pause before a probe; doubles after each failed probe up to maxOpenMs */
  openMs?: number;
  maxOpenMs?: number;
  /** at most one warning per this many ms */
  logIntervalMs?: number;
}

export type Guarded<T> = { ok: true; value: T } | { ok: false };

/** The counter store's condition as /readyz reports it. */
export interface StoreCondition {
  state: "ok" | "degraded";
  /** ISO time the current degraded spell began; null when ok */
  since: string | null;
}

/**
 * Timeout + circuit breaker (cockatiel's) + rate-limited logging around calls to a remote
 * counter store.
 * Closed: calls go through; `failureThreshold` consecutive failures (errors or timeouts) open it.
 * Open: calls are skipped (answered `{ ok: false }` at once) until `openMs` has passed; then one
 * call goes through as a probe (half-open): success closes the breaker, failure reopens it with
 * twice the pause, at most `maxOpenMs` (1 s: a returning store is noticed within a second).
 * Callers decide what `{ ok: false }` means (quotas: serve without enforcing).
 *
 * The store is "degraded" from the moment the breaker opens until a call succeeds again; each
 * change is logged once and handed to the `onChange` listeners (the quota service re-seeds its
 * counters from the usage log when the store is back).
 */
const callsOk = counterStoreCalls.labels({ outcome: "ok" });
const callsFailed = counterStoreCalls.labels({ outcome: "error" });
const callsSkipped = counterStoreCalls.labels({ outcome: "skipped" });

export class CircuitBreaker {
  private readonly breaker: CircuitBreakerPolicy;
  private readonly timeout: TimeoutPolicy;
  /** the pause before the next probe, as the backoff handed it out, and when it ends (epoch ms) */
  private pauseMs = 0;
  private openUntil = 0;
  private lastLog = Number.NEGATIVE_INFINITY;
  private unlogged = 0;
  private readonly options: Required<CircuitBreakerOptions>;
  private degradedSince: number | null = null;
  private listeners: ((c: StoreCondition) => void)[] = [];

  constructor(opts: CircuitBreakerOptions) {
    this.options = {
      failureThreshold: 3,
      openMs: 1_000,
      maxOpenMs: 1_000,
      logIntervalMs: 60_000,
      ...opts,
    };
    const backoff = new ExponentialBackoff({
      initialDelay: this.options.openMs,
      maxDelay: this.options.maxOpenMs,
      generator: noJitterGenerator,
    });
    this.breaker = circuitBreaker(handleAll, {
      halfOpenAfter: noted(backoff, (ms) => {
        this.pauseMs = ms;
      }),
      breaker: new ConsecutiveBreaker(this.options.failureThreshold),
    });
    this.breaker.onBreak(() => {
      this.openUntil = Date.now() + this.pauseMs;
      this.degraded();
    });
    this.breaker.onReset(() => this.recovered());
    this.timeout = timeout(this.options.timeoutMs, TimeoutStrategy.Aggressive);
  }

  get state(): "closed" | "open" | "half-open" {
    const s = this.breaker.state;
    if (s === CircuitState.Closed) return "closed";
    return s === CircuitState.HalfOpen || Date.now() >= this.openUntil ? "half-open" : "open";
  }

  condition(): StoreCondition {
    return this.degradedSince === null
      ? { state: "ok", since: null }
      : { state: "degraded", since: new Date(this.degradedSince).toISOString() };
  }

  /** Called at each change of condition (ok → degraded, degraded → ok). */
  onChange(listener: (c: StoreCondition) => void): void {
    this.listeners.push(listener);
  }

  private changed() {
    const c = this.condition();
    for (const l of this.listeners) {
      try {
        l(c);
      } catch (err) {
        log("error", "counter store condition listener failed", { error: String(err) });
      }
    }
  }

  async run<T>(op: () => Promise<T>): Promise<Guarded<T>> {
    // while one probe is out, the other calls skip the store (they do not wait for the probe)
    if (this.breaker.state === CircuitState.HalfOpen) return this.skipped();
    const started = performance.now();
    try {
      const value = await this.breaker.execute(() => this.timeout.execute(op));
      counterStoreDuration.observe((performance.now() - started) / 1000);
      callsOk.inc();
      return { ok: true, value };
    } catch (err) {
      if (err instanceof BrokenCircuitError) return this.skipped();
      counterStoreDuration.observe((performance.now() - started) / 1000);
      callsFailed.inc();
      this.failed(
        err instanceof TaskCancelledError ? new CounterTimeout(this.options.timeoutMs) : err,
      );
      return { ok: false };
    }
  }

  private skipped(): Guarded<never> {
    this.unlogged++;
    callsSkipped.inc();
    return { ok: false };
  }

  private degraded() {
    if (this.degradedSince !== null) return;
    const now = Date.now();
    this.degradedSince = now;
    log("warn", "counter store degraded: quotas fail open until it answers again", {
      counterStore: "degraded",
      since: new Date(now).toISOString(),
      probeEveryMs: this.options.maxOpenMs,
    });
    this.changed();
  }

  private recovered() {
    if (this.degradedSince === null) return;
    log("info", "counter store ok: reachable again; quotas enforced", {
      counterStore: "ok",
      degradedForMs: Date.now() - this.degradedSince,
    });
    this.degradedSince = null;
    this.changed();
  }

  private failed(err: unknown) {
    const now = Date.now();
    const open = this.breaker.state !== CircuitState.Closed;
    this.unlogged++;
    if (now - this.lastLog >= this.options.logIntervalMs) {
      log("warn", "counter store unavailable; quotas fail open", {
        error: err instanceof Error ? err.message.slice(0, 200) : String(err),
        failures: this.unlogged,
        breaker: open ? "open" : "closed",
        retryInMs: open ? this.openUntil - now : 0,
      });
      this.lastLog = now;
      this.unlogged = 0;
    }
  }
}

/** A backoff (or its factory) that tells `note` each pause it hands out. */
function noted<C>(b: IBackoffFactory<C>, note: (ms: number) => void): IBackoffFactory<C> {
  return {
    next(context: C): IBackoff<C> {
      const next = b.next(context);
      note(next.duration);
      return { duration: next.duration, next: noted(next, note).next };
    },
  };
}

export class CounterTimeout extends Error {
  constructor(ms: number) {
    super(`counter store did not answer within ${ms} ms`);
  }
}
