import { Elysia } from "elysia";

/** What a browser page may send: the credentials, a JSON body, a request id, revalidation. */
const ALLOW_HEADERS = "X-API-Key, Authorization, Content-Type, X-Request-Id, If-None-Match";
const ALLOW_METHODS = "GET, HEAD, POST, PATCH, DELETE, OPTIONS";
/** What a browser page may read beyond the CORS-safelisted response headers. */
export const EXPOSE_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "X-Svg-Variant",
  "X-Asset-Provenance",
  "X-Variant-Restricted",
  "ETag",
  "X-Request-Id",
].join(", ");

/**
 * An origin allow-list setting (CORS_ORIGINS, VISITOR_COUNTER_ORIGINS): "*" or a comma-separated
 * list of exact origins ("https://a.example, http://localhost:5173"), compared case-insensitively
 * and without a trailing slash.
 */
export class OriginList {
  readonly any: boolean;
  private origins: Set<string>;

  constructor(setting: string) {
    this.any = setting.trim() === "*";
    this.origins = new Set(setting.split(",").map(normalise).filter(Boolean));
  }

  /** The Access-Control-Allow-Origin value for a request's Origin; null when not allowed. */
  allow(origin: string | null): string | null {
    if (this.any) return "*";
    return origin && this.origins.has(normalise(origin)) ? origin : null;
  }
}

const normalise = (origin: string) => origin.trim().toLowerCase().replace(/\/+$/, "");

/**
 * CORS for browser clients. Credentials are headers (X-API-Key, Authorization), never cookies,
 * so "*" is safe as the default. With an allow-list, an origin on it is echoed (with Vary:
 * Origin) and any other origin gets no CORS headers, so the browser refuses to share the
 * response. Preflight OPTIONS requests are answered 204 here, before any route's hooks: they
 * need no credentials and never touch a quota. A route that sets its own
 * Access-Control-Allow-Origin (or answers its own OPTIONS route) keeps its own policy.
 */
export function cors(setting: string) {
  const origins = new OriginList(setting);
  const allowed = (origin: string | null) => origins.allow(origin);
  const plugin = new Elysia({ name: "cors-global" }).onRequest(({ request, set }) => {
    const allow = allowed(request.headers.get("origin"));
    if (!origins.any) set.headers.vary = "Origin";
    if (!allow) return;
    set.headers["access-control-allow-origin"] = allow;
    set.headers["access-control-expose-headers"] = EXPOSE_HEADERS;
  });
  // with an allow-list, a route that sets its own Vary (the asset routes: X-API-Key) keeps
  // Origin in it, so a shared cache never serves one origin's answer to another
  if (!origins.any)
    plugin.onAfterHandle({ as: "global" }, ({ set }) => {
      const vary = String(set.headers.vary ?? "");
      if (!/\borigin\b/i.test(vary)) set.headers.vary = vary ? `${vary}, Origin` : "Origin";
    });
  return plugin.options(
    "/*",
    ({ request, set }) => {
      set.status = 204;
      if (!allowed(request.headers.get("origin"))) return "";
      set.headers["access-control-allow-methods"] = ALLOW_METHODS;
      set.headers["access-control-allow-headers"] = ALLOW_HEADERS;
      set.headers["access-control-max-age"] = "600";
      return "";
    },
    { detail: { hide: true } },
  );
}
