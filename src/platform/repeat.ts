import { log } from "./log";

/**
 * Run `task` every `ms`, never two at once (a run slower than `ms` skips the ticks it
 * overlaps), a failure logged as a warning `failed` with its reason. The timer does not keep
 * the process alive; clearInterval stops it.
 */
export function repeat(
  ms: number,
  task: () => Promise<unknown>,
  failed: string,
): ReturnType<typeof setInterval> {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      await task();
    } catch (err) {
      log("warn", failed, { reason: (err as Error).message ?? String(err) });
    } finally {
      busy = false;
    }
  }, ms);
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
