import type { UsageEvent } from "./port";

/** The stored fields of an event, always in this order (`id` first: see eventLines). */
const canonical = (e: UsageEvent): UsageEvent => ({
  id: e.id,
  ts: e.ts,
  day: e.day,
  accountId: e.accountId,
  keyId: e.keyId,
  tier: e.tier,
  bucket: e.bucket,
  route: e.route,
  slug: e.slug,
  variant: e.variant,
  status: e.status,
  latencyMs: e.latencyMs,
});

/** Between two objects of a JSON array of canonical events, and nowhere else. */
const BETWEEN = '},{"id":';

/**
 * Events as JSONL: one JSON object per line, each line ending in "\n"; the same JSON as
 * JSON.stringify of each event. Serialized as one JSON array (about 2x cheaper per event than
 * one JSON.stringify per event) and then split into lines: every object starts with `{"id":`,
 * and inside a JSON string a quote is always escaped (`\"`), so `},{"id":` with its bare quotes
 * can only occur where one object ends and the next begins.
 */
export function eventLines(events: UsageEvent[]): string {
  if (events.length === 0) return "";
  const array = JSON.stringify(events.map(canonical));
  return `${array.slice(1, -1).replaceAll(BETWEEN, '}\n{"id":')}\n`;
}

/** One event as a JSONL line (ends in "\n"). */
export const eventLine = (e: UsageEvent): string => eventLines([e]);
