import { Elysia } from "elysia";
import { currentRequest, type Level, log } from "../platform/log";
import { clientIp } from "./client-ip";

export type RequestLogMode = "all" | "errors" | "off";

/** The status a response went out with (a returned Response carries its own). */
export function statusOf(response: unknown, status: unknown): number {
  if (response instanceof Response) return response.status;
  return typeof status === "number" ? status : 200;
}

/**
 * One JSON line per request once its response is sent: request id, method, route pattern,
 * status, duration, the API key's id (never the key) and the client IP (X-Forwarded-For only
 * with TRUST_PROXY). LOG_REQUESTS=all logs every request, `errors` those answered 4xx or 5xx,
 * `off` none. Level: info below 400, warn for 4xx, error for 5xx (LOG_LEVEL still applies).
 */
export function requestLog(opts: { mode: RequestLogMode; trustProxy: boolean }) {
  return new Elysia({ name: "request-log" }).onAfterResponse(
    { as: "global" },
    // Named fields only (no `...rest`): Elysia compiles for every route just what its global
    // hooks read, and a rest parameter reads everything (query, headers, cookies, body).
    // biome-ignore lint/suspicious/noExplicitAny: principal is resolved by the auth macros on some routes only
    ({ request, set, route, response, server, principal }: any) => {
      const scope = currentRequest();
      const status = statusOf(response, set.status);
      if (opts.mode === "all" || (opts.mode === "errors" && status >= 400)) {
        const level: Level = status >= 500 ? "error" : status >= 400 ? "warn" : "info";
        log(level, "request", {
          method: request.method,
          route: route || null,
          status,
          // arrival to Elysia's after-response hook (a setImmediate once the response is handed over)
          ms: scope ? Math.round((performance.now() - scope.started) * 100) / 100 : null,
          keyId: principal?.keyId ?? null,
          ip: clientIp(request, server, opts.trustProxy),
        });
      }
      if (scope) scope.done = true;
    },
  );
}
