import { AccountService } from "../accounts/service";
import type { Config } from "../config";
import { createCounterStore, createQuotas } from "../quota/setup";
import type { Store } from "../store";
import { rebuildCounters } from "./counters";

/** `npm run admin -- projections rebuild`: recompute usage_daily from the usage event log. */
export async function projectionsRebuild(store: Store): Promise<string> {
  const started = performance.now();
  const r = await store.usage.rebuildDaily();
  const ms = Math.round(performance.now() - started);
  const note =
    store.kind === "embedded"
      ? " (embedded store: the service rebuilds usage_daily from DATA_DIR/events at every start; this run checked that the log replays)"
      : "";
  return `usage_daily rebuilt from ${r.events} events: ${r.rows} rows in ${ms} ms${note}`;
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
