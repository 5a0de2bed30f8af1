import { addDays, utcDay } from "../platform/day";
import { log } from "../platform/log";
import type { UsageLog } from "./log/port";

/** The first UTC day kept: `days` days back from `now`'s day (today counts as one). */
export function retentionCutoff(days: number, now = new Date()): string {
  return addDays(utcDay(now), -(days - 1));
}

/** The first UTC hour (YYYY-MM-DDTHH) whose hourly cells are kept with USAGE_HOURLY_DAYS. */
export const hourlyCutoff = (hourlyDays: number, now = new Date()): string =>
  `${retentionCutoff(hourlyDays, now)}T00`;

/**
 * USAGE_RETENTION_DAYS: raw usage events older than `days` UTC days are removed by the service
 * itself, at start and then every `everyMs` (default 6 h), and hourly cells older than
 * USAGE_HOURLY_DAYS (`hourlyDays`); the days' counts are kept forever (UsageLog.prune).
 */
export function startRetention(
  store: Pick<UsageLog, "prune">,
  days: number,
  everyMs = 6 * 3600_000,
  hourlyDays?: number,
): { run(now?: Date): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const prune = async (now: Date) => {
    const before = retentionCutoff(days, now);
    try {
      const r = await store.prune(
        before,
        hourlyDays === undefined ? undefined : hourlyCutoff(hourlyDays, now),
      );
      if (r.days > 0)
        log("info", "usage events past retention removed; their daily counts are kept", {
          before,
          retentionDays: days,
          ...r,
        });
    } catch (err) {
      log("error", "usage retention failed; retried later", {
        before,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  };
  // one prune at a time; stop() waits for the one under way, so a closing store is never used
  const run = (now = new Date()) => {
    running = running.then(() => prune(now));
    return running;
  };
  const first = setTimeout(() => void run(), 0);
  const timer = setInterval(() => void run(), everyMs);
  first.unref?.();
  timer.unref?.();
  return {
    run,
    stop() {
      clearTimeout(first);
      clearInterval(timer);
      return running;
    },
  };
}
