import { createHmac } from "node:crypto";
import { utcDay } from "../platform/day";
import { log } from "../platform/log";
import type { CircuitBreaker } from "../quota/circuit-breaker";
import { type CounterStore, DAY_GRACE_SECONDS, dayEnd, KEY_PREFIX } from "../quota/store/port";
import type { VisitorCountStore } from "./store/port";

/** The counter-store key that marks one visitor as counted on one UTC day. */
export const visitorKey = (day: string, visitor: string) => `${KEY_PREFIX}vc:${day}:${visitor}`;

/**
 * The public visitor counter. A visitor is the client IP and User-Agent, hashed with a daily
 * salt derived from a stored secret (HMAC-SHA256): the raw IP is never stored, and a hash says
 * nothing about another day's. The once-a-day check is a counter-store key per visitor and day;
 * when the counter store does not answer, the visit counts (fails open, like the quotas).
 */
export class VisitorCounter {
  private secret: Promise<string> | null = null;

  constructor(
    private store: VisitorCountStore,
    private counters: CounterStore,
    /** timeout + breaker for a remote counter store; null for an in-process one */
    private guard: CircuitBreaker | null = null,
    private now: () => Date = () => new Date(),
  ) {}

  count(): Promise<number> {
    return this.store.total();
  }

  /** Count the visitor once per UTC day; the total afterwards. */
  async visit(ip: string, userAgent: string): Promise<{ count: number; counted: boolean }> {
    const now = this.now();
    const day = utcDay(now);
    const key = visitorKey(day, await this.visitorHash(day, ip, userAgent));
    const first = await this.firstToday(key, dayEnd(now) + DAY_GRACE_SECONDS);
    if (!first) return { count: await this.store.total(), counted: false };
    return { count: await this.store.increment(), counted: true };
  }

  /** HMAC(HMAC(secret, day), ip + UA): the daily salt never leaves the process. */
  async visitorHash(day: string, ip: string, userAgent: string): Promise<string> {
    this.secret ??= this.store.secret().catch((err) => {
      this.secret = null;
      throw err;
    });
    const salt = createHmac("sha256", await this.secret)
      .update(`visitor-salt:${day}`)
      .digest();
    return createHmac("sha256", salt).update(`${ip}\n${userAgent}`).digest("hex").slice(0, 32);
  }

  private async firstToday(key: string, expireAt: number): Promise<boolean> {
    const op = () => this.counters.consume(key, 1, expireAt);
    if (this.guard) {
      const r = await this.guard.run(op);
      return r.ok ? r.value.allowed : true;
    }
    try {
      return (await op()).allowed;
    } catch (err) {
      log("error", "counter store call failed", { error: String(err) });
      return true;
    }
  }
}
