import { newId } from "../platform/ids";
import type { UsageEvent, UsageInput } from "./port";

/**
 * An event with its stored fields in the stored order (`id` first, as the export sends it). Built
 * field by field: an object spread takes the engine's slow generic copy, and this runs once per
 * event when a batch is written.
 */
export const usageEvent = (
  id: string,
  ts: string,
  day: string,
  e: Omit<UsageEvent, "id" | "ts" | "day">,
): UsageEvent => {
  // optional fields sit between variant and status
  const out: UsageEvent =
    e.miss !== undefined
      ? withMiss(id, ts, day, e)
      : e.format !== undefined
        ? {
            id,
            ts,
            day,
            accountId: e.accountId,
            keyId: e.keyId,
            tier: e.tier,
            bucket: e.bucket,
            route: e.route,
            slug: e.slug,
            variant: e.variant,
            format: e.format,
            status: e.status,
            latencyMs: e.latencyMs,
          }
        : {
            id,
            ts,
            day,
            accountId: e.accountId,
            keyId: e.keyId,
            tier: e.tier,
            bucket: e.bucket,
            route: e.route,
            slug: e.slug,
            variant: e.variant,
            status: e.status,
            latencyMs: e.latencyMs,
          };
  // folded 429 refusals only (see UsageEvent.count)
  if (e.count !== undefined && e.count > 1) out.count = e.count;
  return out;
};

/** An event that records a miss (rare): built field by field in the stored order. */
function withMiss(
  id: string,
  ts: string,
  day: string,
  e: Omit<UsageEvent, "id" | "ts" | "day">,
): UsageEvent {
  const out = { id, ts, day } as UsageEvent;
  out.accountId = e.accountId;
  out.keyId = e.keyId;
  out.tier = e.tier;
  out.bucket = e.bucket;
  out.route = e.route;
  out.slug = e.slug;
  out.variant = e.variant;
  if (e.format !== undefined) out.format = e.format;
  out.miss = e.miss;
  out.status = e.status;
  out.latencyMs = e.latencyMs;
  return out;
}

/** ts and day of the last input's millisecond: the events of a batch mostly share theirs */
let last = { at: Number.NaN, ts: "", day: "" };

/**
 * The event of a recorded input: its UUIDv7 id carries the input's time, ts is that time in ISO
 * 8601 UTC and day its UTC date. The recorder calls this when it writes a batch rather than on
 * the request path: the strings are then made right before they are serialized, while they are
 * still in the CPU's caches (docs/performance.md, "Usage logging"). Events of
 * the same millisecond share their ts and day strings.
 */
export function eventOf(input: UsageInput): UsageEvent {
  if (input.at !== last.at) {
    const ts = new Date(input.at).toISOString();
    last = { at: input.at, ts, day: ts.slice(0, 10) };
  }
  return usageEvent(newId(input.at), last.ts, last.day, input);
}
