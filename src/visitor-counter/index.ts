import { Elysia } from "elysia";
import { type AddressSource, clientIp } from "../http/client-ip";
import { OriginList } from "../http/cors";
import { ErrorBody, RateLimitedBody, windowLimited } from "../http/errors";
import { notFound } from "../platform/domain-errors";
import type { RateLimiter } from "../quota/rate-limit";
import { VISITOR_COUNTER_LIMIT, VisitorCountResponse } from "./model";
import type { VisitorCounter } from "./service";

export interface VisitorCounterDeps {
  visitors: VisitorCounter;
  limiter: RateLimiter;
  /** VISITOR_COUNTER_ENABLED */
  enabled: boolean;
  /** VISITOR_COUNTER_ORIGINS: "*" or a comma-separated list of origins */
  origins: string;
  trustProxy: boolean;
  upgradeUrl: string;
}

const PATH = "/v1/public/visitor-counter";

/**
 * GET and POST /v1/public/visitor-counter: no key, off unless VISITOR_COUNTER_ENABLED (404
 * not_found), CORS for VISITOR_COUNTER_ORIGINS (this route only), 60 requests per minute per
 * client IP.
 */
export function visitorCounterController(deps: VisitorCounterDeps) {
  const origins = new OriginList(deps.origins);

  /** CORS response headers for the request's Origin (none when it is not allowed). */
  function cors(request: Request, headers: Record<string, string | number>) {
    const allow = origins.allow(request.headers.get("origin"));
    if (!origins.any) headers.vary = "Origin";
    if (allow) headers["access-control-allow-origin"] = allow;
    else {
      // this route's own list wins over the app-wide CORS_ORIGINS grant set before it
      delete headers["access-control-allow-origin"];
      delete headers["access-control-expose-headers"];
    }
  }

  /** Shared by GET and POST: enabled check, CORS headers, per-IP rate limit. */
  async function admit(
    request: Request,
    server: unknown,
    headers: Record<string, string | number>,
  ): Promise<string> {
    if (!deps.enabled) throw notFound("not_found", `No route for ${request.method} ${PATH}`);
    cors(request, headers);
    headers["cache-control"] = "no-store";
    const ip = clientIp(request, server as AddressSource | null, deps.trustProxy);
    const d = await deps.limiter.hit(VISITOR_COUNTER_LIMIT, `ip:${ip}`);
    if (!d.allowed) throw windowLimited(VISITOR_COUNTER_LIMIT, d.retryAfter, deps.upgradeUrl);
    return ip;
  }

  const response = { 200: VisitorCountResponse, 404: ErrorBody, 429: RateLimitedBody };
  const description =
    "Public: no API key. Off unless the server sets VISITOR_COUNTER_ENABLED=true (404 not_found otherwise). " +
    "CORS for the origins in VISITOR_COUNTER_ORIGINS (default *); preflight answered. At most 60 requests per minute per client IP, GET and POST together (429 rate_limit_exceeded with Retry-After).";

  return new Elysia({ tags: ["public"] })
    .get(
      PATH,
      async ({ request, server, set }) => {
        await admit(request, server, set.headers);
        return { count: await deps.visitors.count() };
      },
      {
        response,
        detail: {
          summary: "Read the visitor count",
          description: `The number of visitors counted so far; counts nothing. ${description}`,
          security: [],
        },
      },
    )
    .post(
      PATH,
      async ({ request, server, set }) => {
        const ip = await admit(request, server, set.headers);
        const r = await deps.visitors.visit(ip, request.headers.get("user-agent") ?? "");
        return { count: r.count };
      },
      {
        parse: "none",
        response,
        detail: {
          summary: "Count a visit and read the visitor count",
          description:
            "Counts the caller as a visitor at most once per UTC day and answers the total. A visitor is the client IP (X-Forwarded-For when TRUST_PROXY is set) and User-Agent, hashed with a secret daily salt; no IP is stored. The body, if any, is ignored. " +
            "When the counter store does not answer, the visit counts (fails open, like the quotas). " +
            description,
          security: [],
        },
      },
    )
    .options(
      PATH,
      ({ request, set }) => {
        if (!deps.enabled) throw notFound("not_found", `No route for OPTIONS ${PATH}`);
        cors(request, set.headers);
        set.headers["access-control-allow-methods"] = "GET, POST, OPTIONS";
        set.headers["access-control-allow-headers"] = "Content-Type";
        set.headers["access-control-max-age"] = "86400";
        set.status = 204;
        return "";
      },
      {
        detail: {
          summary: "CORS preflight for the visitor counter",
          description:
            "204 with the CORS headers for VISITOR_COUNTER_ORIGINS; 404 not_found when the counter is off.",
          security: [],
        },
      },
    );
}
