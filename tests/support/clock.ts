import type { Timers } from "../../src/platform/clock";

/**
 * Timers that fire only when the test moves them: `advance(ms)` runs every timer due by then,
 * `pending` lists the timers set and not yet fired or cleared (what a service is waiting for).
 */
export class ManualTimers implements Timers {
  private now = 0;
  private next = 1;
  private timers = new Map<number, { at: number; fn: () => void; ms: number }>();

  setTimeout(fn: () => void, ms: number): number {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, fn, ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** the delays (ms) of the timers not yet fired or cleared, in the order they were set */
  get pending(): number[] {
    return [...this.timers.values()].map((t) => t.ms);
  }

  /** move the time on by `ms`, firing each timer due by then, earliest first */
  advance(ms: number): void {
    this.now += ms;
    const due = [...this.timers]
      .filter(([, t]) => t.at <= this.now)
      .sort(([, a], [, b]) => a.at - b.at);
    for (const [id, t] of due) {
      this.timers.delete(id);
      t.fn();
    }
  }
}
