import type { UsageLog } from "../log/port";
import { type HistoryQuery, resolveRange } from "./service";

export const MISSES_DESCRIPTION =
  "What was asked for and could not be served, ranked by requests: domains and e-mail domains " +
  "GET /v1/brand found no brand for (404), slugs that are unknown (404) or whose brand has no " +
  "artwork yet (the placeholder was served), search queries (normalised) without result, and " +
  "the merchants of card-statement descriptors no brand matched (GET /v1/brand?transaction=, " +
  "POST /v1/transactions: the merchant's name cleaned of prefixes, numbers and place; never a " +
  "person paid through a wallet, never a bank operation). " +
  "An e-mail address is stored as its domain only, never its local part. Days `from`..`to` " +
  "(default the 30 days ending today, at most 366), `kind` to keep one kind, `limit` rows " +
  "(1..1000, default 50).";

export const MISSES_DEFAULT_LIMIT = 50;
export const MISSES_MAX_LIMIT = 1000;

export type MissKind = "domain" | "email" | "slug" | "query" | "transaction";
export const MISS_KINDS: readonly MissKind[] = ["domain", "email", "slug", "query", "transaction"];

export interface MissRow {
  kind: string;
  value: string;
  count: number;
}

/**
 * Misses of days from..to (of one account, or of all: null), ranked by count (ties by kind and
 * value), at most `limit`, optionally of one kind only.
 */
export async function rankedMisses(
  store: Pick<UsageLog, "misses">,
  accountId: string | null,
  q: HistoryQuery & { kind?: MissKind; limit?: number },
  now = new Date(),
): Promise<{ from: string; to: string; misses: MissRow[] }> {
  const { from, to } = resolveRange(q, now);
  const rows: MissRow[] = [];
  for (const [miss, count] of await store.misses(accountId, from, to)) {
    const at = miss.indexOf(":");
    const kind = miss.slice(0, at);
    if (q.kind !== undefined && kind !== q.kind) continue;
    rows.push({ kind, value: miss.slice(at + 1), count });
  }
  rows.sort(
    (a, b) =>
      b.count - a.count ||
      (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.value < b.value ? -1 : 1),
  );
  return { from, to, misses: rows.slice(0, q.limit ?? MISSES_DEFAULT_LIMIT) };
}
