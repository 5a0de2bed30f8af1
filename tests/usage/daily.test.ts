import { describe, expect, test } from "bun:test";
import { countInto, DailyProjection, zeroCounts } from "../../src/usage/daily";
import { event } from "./util";

describe("DailyProjection", () => {
  test("addAll over interleaved accounts, days and buckets equals adding one by one", () => {
    const events = [
      event({ accountId: "a", ts: "2026-01-01T00:00:00.000Z", bucket: "svg", status: 200 }),
      event({ accountId: "a", ts: "2026-01-01T00:00:01.000Z", bucket: "svg", status: 429 }),
      event({ accountId: "b", ts: "2026-01-01T00:00:02.000Z", bucket: "svg", status: 404 }),
      event({ accountId: "a", ts: "2026-01-01T00:00:03.000Z", bucket: "png", status: 500 }),
      event({ accountId: "a", ts: "2026-01-02T00:00:00.000Z", bucket: "svg", status: 200 }),
      event({ accountId: "b", ts: "2026-01-02T00:00:00.000Z", bucket: "svg", status: 200 }),
      event({ accountId: "a", ts: "2026-01-01T00:00:04.000Z", bucket: "svg", status: 200 }),
    ];
    const batch = new DailyProjection();
    batch.addAll(events);
    const single = new DailyProjection();
    for (const e of events) single.addAll([e]);
    for (const account of ["a", "b"])
      expect(batch.query(account, "2026-01-01", "2026-01-02")).toEqual(
        single.query(account, "2026-01-01", "2026-01-02"),
      );
    expect(batch.query("a", "2026-01-01", "2026-01-02")).toEqual([
      { accountId: "a", day: "2026-01-01", bucket: "svg", requests: 3, errors: 0, rateLimited: 1 },
      { accountId: "a", day: "2026-01-01", bucket: "png", requests: 1, errors: 1, rateLimited: 0 },
      { accountId: "a", day: "2026-01-02", bucket: "svg", requests: 1, errors: 0, rateLimited: 0 },
    ]);
    expect(batch.query("b", "2026-01-01", "2026-01-01")).toEqual([
      { accountId: "b", day: "2026-01-01", bucket: "svg", requests: 1, errors: 1, rateLimited: 0 },
    ]);
    expect(batch.size).toBe(5);
  });

  test("countInto: errors are 4xx/5xx except 429, which counts apart", () => {
    const countsOf = (status: number) => {
      const c = zeroCounts();
      countInto(c, status);
      return c;
    };
    expect(countsOf(200)).toEqual({ requests: 1, errors: 0, rateLimited: 0 });
    expect(countsOf(304)).toEqual({ requests: 1, errors: 0, rateLimited: 0 });
    expect(countsOf(404)).toEqual({ requests: 1, errors: 1, rateLimited: 0 });
    expect(countsOf(429)).toEqual({ requests: 1, errors: 0, rateLimited: 1 });
    expect(countsOf(503)).toEqual({ requests: 1, errors: 1, rateLimited: 0 });
  });
});
