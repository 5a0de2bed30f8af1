import { describe, expect, test } from "bun:test";
import { ApiError, windowLimited } from "../../src/http/errors";

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
