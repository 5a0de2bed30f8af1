import { DAY_MS, utcDay } from "../platform/day";
import { type MissKind, rankedMisses } from "./analytics/misses";
import type { UsageLog } from "./log/port";

/** The part of the store (store/index.ts) these commands read. */
interface UsageStore {
  kind: "embedded" | "mongodb";
  usage: UsageLog;
}

/**
 * `npm run admin -- projections rebuild`: recompute usage_daily and the analytics cells and
 * misses from the usage event log; `progress` hears a line now and then.
 */
export async function projectionsRebuild(
  store: UsageStore,
  progress: (line: string) => void = () => {},
): Promise<string> {
  const started = performance.now();
  let events = 0;
  const r = await store.usage.rebuild((p) => {
    events = p.events;
    const s = ((performance.now() - started) / 1000).toFixed(1);
    progress(`${s}s: ${events} events read (up to ${p.day})`);
  });
  const ms = Math.round(performance.now() - started);
  return `projections rebuilt from ${r.events} events of ${r.days} days in ${ms} ms (daily counts, analytics cells, misses)`;
}

/** `--since 7d` / `24h` / a YYYY-MM-DD day: the first UTC day it covers. */
export function sinceDay(since: string, now = new Date()): string | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(since)) return since;
  const m = /^(\d{1,4})([dh])$/.exec(since);
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === "d" ? DAY_MS : 3_600_000);
  return utcDay(now.getTime() - ms);
}

/** `npm run admin -- misses --since 7d`: what every account asked for in vain, ranked. */
export async function missesReport(
  store: UsageStore,
  opts: { since: string; kind?: MissKind; limit: number },
): Promise<string> {
  const from = sinceDay(opts.since);
  if (!from) throw new RangeError("--since must be like 7d, 24h or a YYYY-MM-DD day");
  const r = await rankedMisses(store.usage, null, {
    from,
    to: utcDay(Date.now()),
    kind: opts.kind,
    limit: opts.limit,
  });
  const lines = r.misses.map(
    (m) => `${String(m.count).padStart(8)}  ${m.kind.padEnd(6)}  ${m.value}`,
  );
  return [`misses ${r.from}..${r.to} (all accounts)`, ...lines].join("\n");
}
