import { whenFinal } from "../http/final-status";
import { CLIENT_GONE, closeMeter, type Meter } from "../usage/meter";
import type { UsageRecorder } from "../usage/port";

/**
 * The meters of in-flight requests: opened by the `metered` macro, noted by handlers, settled
 * once the status is final. The metering itself is framework-free (usage/meter.ts).
 */
const open = new WeakMap<Request, Meter>();

/** Called by the `metered` macro once the unit is consumed (or refused: a 429 is settled too). */
export function openMeter(request: Request, meter: Meter): void {
  open.set(request, meter);
  // anything thrown ends at the error plugin, which settles the meter through this hook
  whenFinal(request, (status) => settleMeter(request, status));
}

/**
 * Ends a metered request once its status is known: the usage event is recorded (a buffer push:
 * nothing waits on the event store) and a server error gives its unit back (the outcome rule in
 * docs/quota.md). Called where the status is final: the `metered` macro's afterHandle for a
 * handler's answer, the error plugin for anything thrown. Only the first call for a request
 * counts; requests that were never metered are ignored. With USAGE_DURABILITY=strict it returns
 * a promise to await before answering (see closeMeter).
 */
function settleMeter(request: Request, status: number): undefined | Promise<void> {
  const m = open.get(request);
  if (!m) return;
  open.delete(request);
  // the client went away before its answer was ready (e.g. gave up on a slow render): it gets
  // nothing, so it pays nothing; logged as 499 (client closed request)
  if (request.signal.aborted) status = CLIENT_GONE;
  return closeMeter(m, status);
}

type HookContext = { request: Request; set: { status?: unknown } };

/** afterHandle of a metered route: the usage event is recorded, nothing waits */
function settleNow({ request, set }: HookContext) {
  settleMeter(request, typeof set.status === "number" ? set.status : 200);
}

/** afterHandle with USAGE_DURABILITY=strict: returns (Elysia awaits) until the event is durable */
function settleDurably({ request, set }: HookContext) {
  return settleMeter(request, typeof set.status === "number" ? set.status : 200);
}

/**
 * The afterHandle hook that settles a metered route's meter with the handler's status. Elysia
 * awaits a hook that returns a call, so the strict one is chosen only when the recorder is
 * strict: batched routes stay synchronous.
 */
export const settleHook = (usage: UsageRecorder) => (usage.strict ? settleDurably : settleNow);

/**
 * What a handler learns about its request that the usage event should name: the brand it
 * resolved (`slug`), or what it could not serve (`miss`, e.g. `domain:acme.test`). No-op for a
 * request that is not metered.
 */
export function noteMeter(request: Request, note: { slug?: string; miss?: string[] }): void {
  const m = open.get(request);
  if (!m) return;
  if (note.slug !== undefined) m.slug = note.slug;
  if (note.miss !== undefined) m.miss = note.miss;
}
