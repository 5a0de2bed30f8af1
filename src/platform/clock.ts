/**
 * The timers a service waits with, handed in so a test can move them itself
 * (tests/support/clock.ts `ManualTimers`): a wait that ends "after ms" ends when the test says.
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The runtime's own timers. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
