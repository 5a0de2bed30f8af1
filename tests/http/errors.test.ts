import { describe, expect, test } from "bun:test";
import { ApiError, httpError, rateLimited, STATUS, windowLimited } from "../../src/http/errors";
import {
  conflict,
  type DomainError,
  forbidden,
  invalid,
  limitReached,
  notFound,
  providerFailed,
  unauthenticated,
  unavailable,
  unusable,
} from "../../src/platform/domain-errors";

describe("errors: one 429 body", () => {
  test("a window cap names its size, window and what it counts, with Retry-After", () => {
    const e = windowLimited({ limit: 3, windowSeconds: 3600, label: "POST /x" }, 42, "https://u");
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(429);
    expect(e.headers["retry-after"]).toBe("42");
    expect(e.body() as Record<string, unknown>).toEqual({
      error: "rate_limit_exceeded",
      message: "Rate limit of 3 requests per hour reached for POST /x. Retry in 42 seconds.",
      reset_in_seconds: 42,
      upgrade_url: "https://u",
    });
  });
});

describe("errors: domain errors become HTTP answers in one place", () => {
  test("each kind of refusal answers its status, with its code, message and fields", () => {
    const cases: [DomainError, number][] = [
      [invalid("Invalid query parameter limit"), 422],
      [invalid("too many", "batch_too_large"), 422],
      [unusable("invalid_pin", "Not artwork.", { field: "body" }), 400],
      [unauthenticated("invalid_credentials", "Wrong password."), 401],
      [forbidden("url_expired", "This image URL has expired."), 403],
      [notFound("report_not_found", "No report r1."), 404],
      [conflict("brand_exists", "The catalog has it.", { slug: "github" }), 409],
      [limitReached("Too many failed logins.", 42, "https://u"), 429],
      [providerFailed("billing_provider_error", "No answer."), 502],
      [unavailable("billing_not_configured", "Not configured."), 503],
    ];
    for (const [err, status] of cases) {
      const answer = httpError(err) as ApiError;
      expect({ code: err.code, status: answer.status }).toEqual({ code: err.code, status });
      expect(answer.body()).toEqual({ error: err.code, message: err.message, ...err.details });
    }
    // every kind has its status
    expect(Object.keys(STATUS).sort()).toEqual([...new Set(cases.map(([e]) => e.kind))].sort());
  });

  test("a refusal that says when to retry carries Retry-After; the 429 body is the spec's", () => {
    const limited = httpError(limitReached("Daily cap reached.", 42, "https://u")) as ApiError;
    expect(limited.headers).toEqual({ "retry-after": "42" });
    expect(limited.body() as Record<string, unknown>).toEqual({
      error: "rate_limit_exceeded",
      message: "Daily cap reached.",
      reset_in_seconds: 42,
      upgrade_url: "https://u",
    });
    expect(httpError(unavailable("render_busy", "Busy.", 3))?.headers).toEqual({
      "retry-after": "3",
    });
    expect(httpError(unavailable("console_not_built", "Not built."))?.headers).toEqual({});
    // rateLimited (the guard's) is the same answer with its X-RateLimit-* headers
    const guarded = rateLimited("Daily cap reached.", 42, "https://u", {
      "x-ratelimit-limit": "5",
    });
    expect(guarded.body()).toEqual(limited.body());
    expect(guarded.headers).toEqual({ "retry-after": "42", "x-ratelimit-limit": "5" });
  });

  test("an ApiError passes as it is; anything else is no refusal (an internal error)", () => {
    const api = new ApiError(413, "payload_too_large", "Too large.");
    expect(httpError(api)).toBe(api);
    expect(httpError(new Error("boom"))).toBeNull();
    expect(httpError("boom")).toBeNull();
    expect(notFound("x", "y").prefixed("images[2]: ").message).toBe("images[2]: y");
  });
});
