import { AccountService } from "../accounts/service";
import type { Config } from "../config";
import { createCounterStore, createQuotas } from "../quota/setup";
import type { Store } from "../store";
import { type MissKind, rankedMisses } from "./analytics/misses";
import { rebuildCounters } from "./counters";

/**
 * `npm run admin -- projections rebuild`: recompute usage_daily and the analytics cells and
 * misses from the usage event log; `progress` hears a line now and then.
 */
export async function projectionsRebuild(
  store: Store,
  progress: (line: string) => void = () => {},
): Promise<string> {
  const started = performance.now();
  let events = 0;
  const r = await store.usage.rebuildDaily((p) => {
    events = store.kind === "embedded" ? events + p.events : p.events;
    const s = ((performance.now() - started) / 1000).toFixed(1);
    progress(`${s}s: ${events} events read (up to ${p.day})`);
  });
  const ms = Math.round(performance.now() - started);
  const note =
    store.kind === "embedded"
      ? " (embedded store: the service rebuilds usage_daily at every start and the analytics cells on their first query; this run checked that the log replays)"
      : "";
  return `usage_daily rebuilt from ${r.events} events: ${r.rows} rows in ${ms} ms, with the analytics cells and misses${note}`;
}

/** `--since 7d` / `24h` / a YYYY-MM-DD day: the first UTC day it covers. */
export function sinceDay(since: string, now = new Date()): string | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(since)) return since;
  const m = /^(\d{1,4})([dh])$/.exec(since);
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === "d" ? 86_400_000 : 3_600_000);
  return new Date(now.getTime() - ms).toISOString().slice(0, 10);
}

/** `npm run admin -- misses --since 7d`: what every account asked for in vain, ranked. */
export async function missesReport(
  store: Store,
  opts: { since: string; kind?: MissKind; limit: number },
): Promise<string> {
  const from = sinceDay(opts.since);
  if (!from) throw new RangeError("--since must be like 7d, 24h or a YYYY-MM-DD day");
  const r = await rankedMisses(store.usage, null, {
    from,
    to: new Date().toISOString().slice(0, 10),
    kind: opts.kind,
    limit: opts.limit,
  });
  const lines = r.misses.map(
    (m) => `${String(m.count).padStart(8)}  ${m.kind.padEnd(6)}  ${m.value}`,
  );
  return [`misses ${r.from}..${r.to} (all accounts)`, ...lines].join("\n");
}

export class CountersUnavailable extends Error {}

/**
 * `npm run admin -- counters rebuild`: replay today's usage events into the shared counter
 * store (Upstash). With the in-memory counter store there is nothing to rebuild from here:
 * each service process rebuilds its own counters from the log when it starts.
 */
export async function countersRebuild(store: Store, config: Config): Promise<string> {
  const counters = createCounterStore(config);
  if (counters.kind === "memory") {
    await counters.close();
    throw new CountersUnavailable(
      "No shared counter store configured (UPSTASH_REDIS_REST_URL): counters live in the service's memory, and the service rebuilds them from the usage event log at start.",
    );
  }
  const { quota } = createQuotas(counters, {
    timeoutMs: Math.max(config.COUNTER_TIMEOUT_MS, 5000),
  });
  try {
    const r = await rebuildCounters(store.usage, quota, new AccountService(store.accounts));
    return `counters for ${r.day} rebuilt from ${r.events} counted events: ${r.counters} counters raised`;
  } finally {
    await quota.close();
  }
}
