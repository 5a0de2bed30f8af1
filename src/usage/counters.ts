import type { Account } from "../accounts/model";
import { utcDay } from "../quota/counter-store";
import type { QuotaService } from "../quota/service";
import type { UsageEventStore } from "./port";

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
 * Replay today's usage events into the counter store (the quota counters are a projection of
 * the log). Counters are only raised, never lowered, so running it on a live store is safe.
 */
export async function rebuildCounters(
  usage: UsageEventStore,
  quota: Pick<QuotaService, "rebuildFromEvents">,
  accounts: { getAccount(accountId: string): Promise<Account | null> },
  now = new Date(),
): Promise<{ day: string; events: number; counters: number }> {
  const cache = new Map<string, Account | null>();
  const day = utcDay(now);
  // the store's tally when it keeps one; else streamed: the day's log is never held in memory
  // (millions of events on a busy day)
  return quota.rebuildFromEvents(usage.tallyOfDay?.(day) ?? usage.eventsOfDay(day), {
    now,
    successor: async (keyId, accountId) => {
      if (!accountId) return keyId;
      if (!cache.has(accountId)) cache.set(accountId, await accounts.getAccount(accountId));
      return successorOf(cache.get(accountId) ?? null, keyId);
    },
  });
}
