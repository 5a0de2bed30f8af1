import { AsyncLocalStorage } from "node:async_hooks";

/** Logs are one JSON object per line on stdout (warn and error on stderr). */
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: Level = "info";

export function setLogLevel(level: Level) {
  threshold = level;
}

/** The request a log line belongs to (see beginRequest). */
export interface RequestScope {
  requestId: string;
  /** performance.now() when the request arrived */
  started: number;
  /** set once the response is sent: later lines (timers the request started) are not its own */
  done: boolean;
}

const scope = new AsyncLocalStorage<RequestScope>();

/**
 * Called at the start of each request (http/security.ts): every line logged while the request
 * is being served, however deep in the services, carries its requestId. enterWith (not run)
 * because Elysia's onRequest hook cannot wrap the rest of the request in a callback; the scope
 * is per request because each request enters its own.
 */
export function beginRequest(requestId: string): RequestScope {
  const s: RequestScope = { requestId, started: performance.now(), done: false };
  scope.enterWith?.(s);
  return s;
}

/** The scope of the request being served, if any. */
export function currentRequest(): RequestScope | undefined {
  return scope.getStore();
}

/** Where lines go: the console, or a test's capture (see captureLogs). */
type Sink = (level: Level, line: string) => void;
const consoleSink: Sink = (level, line) => {
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
};
let sink: Sink = consoleSink;

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}) {
  if (ORDER[level] < ORDER[threshold]) return;
  const s = scope.getStore();
  const requestId = s && !s.done ? s.requestId : undefined;
  const line = JSON.stringify({ ts: new Date().toISOString(), level, msg, requestId, ...fields });
  sink(level, line);
}

/**
 * For tests that provoke warnings or errors: the lines are kept (parsed) instead of printed,
 * until `restore()`. `npm test` prints no error-level line; a test that expects one asserts on it.
 */
export function captureLogs(): { lines: Record<string, unknown>[]; restore(): void } {
  const lines: Record<string, unknown>[] = [];
  const previous = { sink, threshold };
  // info and above, whatever LOG_LEVEL an earlier start-up in this process left behind
  threshold = "info";
  sink = (_level, line) => {
    lines.push(JSON.parse(line));
  };
  return {
    lines,
    restore: () => {
      sink = previous.sink;
      threshold = previous.threshold;
    },
  };
}
