/**
 * Work that waits for a request's final status, registered by a plugin above http/ (the request
 * meter in usage/meter.ts). The error plugin runs it for anything thrown; the plugin that
 * registered it runs it itself for a handler's answer. It runs once: `runFinal` forgets it.
 */
type Final = (status: number) => undefined | Promise<void>;

const pending = new WeakMap<Request, Final>();

/** Registers `f` to run with `request`'s final status (replacing any earlier one). */
export function whenFinal(request: Request, f: Final): void {
  pending.set(request, f);
}

/** Runs and forgets what waits for `request`'s final status; undefined when nothing does. */
export function runFinal(request: Request, status: number): undefined | Promise<void> {
  const f = pending.get(request);
  if (!f) return;
  pending.delete(request);
  return f(status);
}
