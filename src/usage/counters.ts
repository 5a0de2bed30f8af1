import { join } from "node:path";
import type { Account } from "../accounts/model";
import { AccountService } from "../accounts/service";
import type { AccountStore } from "../accounts/store/port";
import type { Config } from "../config";
import { utcDay } from "../platform/day";
import type { CountableEvent } from "../quota/gate";
import type { QuotaService } from "../quota/service";
import { createCounterStore, createQuotas } from "../quota/setup";
import { countablesOf, dayNo } from "./log/batch";
import type { UsageLog } from "./log/port";
import { spilledBatches, spillFiles } from "./log/spill";

/**
 * The quota counters are a projection of the usage event log, and this module is where they are
 * rebuilt from it: at start (in-memory counters), when a remote counter store comes back or is
 * found empty (re-seed), and on the operator's command.
 */

/**
 * The key that carries a key's daily counters today: a key revoked by a regeneration hands its
 * counts to the key issued in the same step (quota carry-over), possibly several times a day.
 */
export function successorOf(account: Account | null, keyId: string): string {
  if (!account) return keyId;
  let current = keyId;
  for (let hops = 0; hops < account.keys.length; hops++) {
    const key = account.keys.find((k) => k.id === current);
    if (!key?.revokedAt) return current;
    const next = account.keys.find((k) => k.id !== current && k.createdAt === key.revokedAt);
    if (!next) return current;
    current = next.id;
  }
  return current;
}

/**
 * Today's requests from the log's daily tally (the day's projection: never a scan of its events)
 * and from the spill files not replayed yet (their batches the store does not hold), counted by
 * account, key, bucket and status.
 */
async function* todaysCounts(
  usage: Pick<UsageLog, "tallyOfDay" | "holds" | "events">,
  spillDir: string | undefined,
  day: string,
): AsyncIterable<CountableEvent> {
  yield* usage.tallyOfDay(day);
  if (!spillDir) return;
  const today = dayNo(Date.parse(`${day}T00:00:00Z`));
  for (const name of spillFiles(spillDir)) {
    const batches = (await spilledBatches(join(spillDir, name), usage)).filter(
      (b) => dayNo(b.t0) === today,
    );
    const held = await usage.holds(batches);
    for (let k = 0; k < batches.length; k++)
      if (!held[k]) yield* countablesOf(batches[k] as (typeof batches)[number], day);
  }
}

/**
 * Replay today's usage into the counter store (the quota counters are a projection of the log):
 * the log's tally of the day plus the spill files not replayed yet. Counters are only raised,
 * never lowered, so running it on a live store is safe.
 */
export async function rebuildCounters(
  usage: Pick<UsageLog, "tallyOfDay" | "holds" | "events">,
  quota: Pick<QuotaService, "rebuildFromEvents">,
  accounts: { getAccount(accountId: string): Promise<Account | null> },
  now = new Date(),
  spillDir?: string,
): Promise<{ day: string; events: number; counters: number }> {
  const cache = new Map<string, Account | null>();
  const day = utcDay(now);
  return quota.rebuildFromEvents(todaysCounts(usage, spillDir, day), {
    now,
    successor: async (keyId, accountId) => {
      if (!accountId) return keyId;
      if (!cache.has(accountId)) cache.set(accountId, await accounts.getAccount(accountId));
      return successorOf(cache.get(accountId) ?? null, keyId);
    },
  });
}

/**
 * Keeps `quota`'s counters a projection of the log: in-memory counters start empty, so today's
 * counts are seeded now, from the log's daily tally and the spill files an earlier process left
 * (read, not replayed: their replay runs in the background once the service is ready); a remote
 * store that comes back after an outage, or is found empty, is re-seeded the same way.
 */
export async function projectCounters(
  quota: QuotaService,
  usage: Pick<UsageLog, "tallyOfDay" | "holds" | "events">,
  accounts: AccountService,
  spillDir?: string,
): Promise<void> {
  const rebuild = () => rebuildCounters(usage, quota, accounts, new Date(), spillDir);
  if (quota.store.kind === "memory") await rebuild();
  quota.setReseeder(rebuild);
}

export class CountersUnavailable extends Error {}

/**
 * `npm run admin -- counters rebuild`: replay today's usage events into the shared counter
 * store (Upstash). With the in-memory counter store there is nothing to rebuild from here:
 * each service process rebuilds its own counters from the log when it starts.
 */
export async function countersRebuild(
  store: { usage: UsageLog; accounts: AccountStore },
  config: Config,
): Promise<string> {
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
    const r = await rebuildCounters(
      store.usage,
      quota,
      new AccountService(store.accounts),
      new Date(),
      join(config.DATA_DIR, "spill"),
    );
    return `counters for ${r.day} rebuilt from ${r.events} counted events: ${r.counters} counters raised`;
  } finally {
    await quota.close();
  }
}
