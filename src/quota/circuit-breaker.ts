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
  now?: () => number;
}

export type Guarded<T> = { ok: true; value: T } | { ok: false };

/** The counter store's condition as /readyz reports it. */
export interface StoreCondition {
  state: "ok" | "degraded";
  /** ISO time the current degraded spell began; null when ok */
  since: string | null;
}

/**
 * Timeout + circuit breaker + rate-limited logging around calls to a remote counter store.
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
  private failures = 0;
  private openUntil = 0;
  private pauseMs: number;
  private probing = false;
  private lastLog = Number.NEGATIVE_INFINITY;
  private unlogged = 0;
  private readonly o: Required<CircuitBreakerOptions>;
  private degradedSince: number | null = null;
  private listeners: ((c: StoreCondition) => void)[] = [];

  constructor(opts: CircuitBreakerOptions) {
    this.o = {
      failureThreshold: 3,
      openMs: 1_000,
      maxOpenMs: 1_000,
      logIntervalMs: 60_000,
      now: Date.now,
      ...opts,
    };
    this.pauseMs = this.o.openMs;
  }

  get state(): "closed" | "open" | "half-open" {
    if (this.openUntil === 0) return "closed";
    return this.probing || this.o.now() >= this.openUntil ? "half-open" : "open";
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
    let probe = false;
    if (this.openUntil !== 0) {
      if (this.probing || this.o.now() < this.openUntil) {
        this.unlogged++;
        callsSkipped.inc();
        return { ok: false };
      }
      this.probing = probe = true;
    }
    const started = performance.now();
    try {
      const value = await withTimeout(op, this.o.timeoutMs);
      counterStoreDuration.observe((performance.now() - started) / 1000);
      callsOk.inc();
      this.succeeded(probe);
      return { ok: true, value };
    } catch (err) {
      counterStoreDuration.observe((performance.now() - started) / 1000);
      callsFailed.inc();
      this.failed(err, probe);
      return { ok: false };
    } finally {
      if (probe) this.probing = false;
    }
  }

  private succeeded(_probe: boolean) {
    this.failures = 0;
    this.openUntil = 0;
    this.pauseMs = this.o.openMs;
    if (this.degradedSince !== null) {
      log("info", "counter store ok: reachable again; quotas enforced", {
        counterStore: "ok",
        degradedForMs: this.o.now() - this.degradedSince,
      });
      this.degradedSince = null;
      this.changed();
    }
  }

  private failed(err: unknown, probe: boolean) {
    this.failures++;
    const now = this.o.now();
    if (probe) {
      this.pauseMs = Math.min(this.pauseMs * 2, this.o.maxOpenMs);
      this.openUntil = now + this.pauseMs;
    } else if (this.failures >= this.o.failureThreshold && this.openUntil === 0) {
      this.openUntil = now + this.pauseMs;
    }
    if (this.openUntil !== 0 && this.degradedSince === null) {
      this.degradedSince = now;
      log("warn", "counter store degraded: quotas fail open until it answers again", {
        counterStore: "degraded",
        since: new Date(now).toISOString(),
        probeEveryMs: this.o.maxOpenMs,
      });
      this.changed();
    }
    this.unlogged++;
    if (now - this.lastLog >= this.o.logIntervalMs) {
      log("warn", "counter store unavailable; quotas fail open", {
        error: err instanceof Error ? err.message.slice(0, 200) : String(err),
        failures: this.unlogged,
        breaker: this.openUntil !== 0 ? "open" : "closed",
        retryInMs: this.openUntil !== 0 ? this.openUntil - now : 0,
      });
      this.lastLog = now;
      this.unlogged = 0;
    }
  }
}

export class CounterTimeout extends Error {
  constructor(ms: number) {
    super(`counter store did not answer within ${ms} ms`);
  }
}

function withTimeout<T>(op: () => Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CounterTimeout(ms)), ms);
  });
  return Promise.race([Promise.resolve().then(op), timeout]).finally(() => clearTimeout(timer));
}
