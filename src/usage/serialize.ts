import { newId } from "../platform/ids";
import type { UsageEvent, UsageInput } from "./port";

/**
 * An event with its stored fields in the stored order (`id` first: see JsonlEncoder). Built
 * field by field: an object spread takes the engine's slow generic copy, and this runs once per
 * event when a batch is written.
 */
export const usageEvent = (
  id: string,
  ts: string,
  day: string,
  e: Omit<UsageEvent, "id" | "ts" | "day">,
): UsageEvent => {
  // optional fields sit between variant and status (the order event-scan's fast path reads)
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

const canonicalize = (e: UsageEvent): UsageEvent => usageEvent(e.id, e.ts, e.day, e);

/**
 * Between two objects of a JSON array of canonical events, and nowhere else as long as their
 * values are strings, numbers or null (JsonlEncoder checks the count).
 */
const BETWEEN = new TextEncoder().encode('},{"id":');
const NEWLINE = 10;
const encoder = new TextEncoder();

/**
 * Writes events as JSONL bytes (UTF-8) into a buffer it keeps and reuses: one JSON object per
 * line, each line ending in "\n"; the same JSON as JSON.stringify of each event. Serialized as
 * one JSON array (about 2x cheaper per event than one JSON.stringify per event) and split into
 * lines in place: every object starts with `{"id":`, and inside a JSON string a quote is always
 * escaped (`\"`), so `},{"id":` with its bare quotes can only occur where one object ends and
 * the next begins. Its comma and the array's closing bracket become newlines (same byte length,
 * so no copy); the opening bracket is sliced off. Per call, only the JSON string is allocated.
 */
export class JsonlEncoder {
  private buf = new Uint8Array(64 * 1024);

  /**
   * The events' JSONL bytes, valid until the next call. Events are put in canonical form
   * (usageEvent) first unless `canonical` says they were made by usageEvent or eventOf.
   */
  encode(events: UsageEvent[], canonical = false): Uint8Array {
    if (events.length === 0) return this.buf.subarray(0, 0);
    const json = this.write(JSON.stringify(canonical ? events : events.map(canonicalize)));
    const bytes = Buffer.from(json.buffer, 0, json.length);
    bytes[bytes.length - 1] = NEWLINE;
    let lines = 1;
    for (
      let i = bytes.indexOf(BETWEEN, 1);
      i !== -1;
      i = bytes.indexOf(BETWEEN, i + BETWEEN.length), lines++
    )
      bytes[i + 1] = NEWLINE;
    // not one line per event: an event said to be canonical was not (id not first), or a value
    // that is not a string holds `},{"id":` (a tampered spill file): one stringify per event
    if (lines !== events.length) return this.write(`${events.map(lineOf).join("\n")}\n`);
    return bytes.subarray(1);
  }

  /** text as UTF-8 in the buffer */
  private write(text: string): Uint8Array {
    let r = encoder.encodeInto(text, this.buf);
    if (r.read < text.length) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit
      this.buf = new Uint8Array(Math.max(this.buf.length * 2, text.length * 3));
      r = encoder.encodeInto(text, this.buf);
    }
    return this.buf.subarray(0, r.written);
  }
}

const lineOf = (e: UsageEvent): string => JSON.stringify(canonicalize(e));
