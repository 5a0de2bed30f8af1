import { describe, expect, test } from "bun:test";
import { newId } from "../../src/platform/ids";
import type { UsageEvent } from "../../src/usage/port";
import { eventOf, usageEvent } from "../../src/usage/serialize";

const base: UsageEvent = {
  id: newId(),
  ts: "2026-11-22T10:00:00.123Z",
  day: "2026-11-22",
  accountId: newId(),
  keyId: "0123456789abcdef",
  tier: "free",
  bucket: "svg",
  route: "/v1/svg/:slug",
  slug: "github",
  variant: "mono",
  status: 200,
  latencyMs: 1.25,
};

describe("usageEvent", () => {
  test("builds the stored fields in the stored order, id first", () => {
    const { id: _id, ts, day, ...input } = base;
    const e = usageEvent("the-id", ts, day, { ...input, extra: "dropped" } as typeof input);
    expect(Object.keys(e)).toEqual(Object.keys(base));
    expect(e).toEqual({ ...base, id: "the-id" });
    expect(JSON.stringify(e)).toBe(JSON.stringify({ ...base, id: "the-id" }));
  });
});

describe("eventOf", () => {
  test("a recorded input becomes its event: ISO ts, UTC day and a UUIDv7 of its time", () => {
    const { id: _id, ts: _ts, day: _day, ...fields } = base;
    const at = Date.parse("2025-12-31T23:59:59.999Z");
    const e = eventOf({ at, ...fields });
    expect(Object.keys(e)).toEqual(Object.keys(base));
    expect(e).toMatchObject({ ...fields, ts: "2025-12-31T23:59:59.999Z", day: "2025-12-31" });
    expect(Number.parseInt(e.id.replace("-", "").slice(0, 12), 16)).toBe(at);
    // two inputs of the same millisecond: distinct ids, in the order they were made
    const next = eventOf({ at, ...fields });
    expect(next.id).not.toBe(e.id);
    expect(next.id > e.id).toBe(true);
    // the next millisecond (and the next UTC day) gets its own ts and day
    const later = eventOf({ ...fields, at: at + 1 });
    expect(later).toMatchObject({ ts: "2026-01-01T00:00:00.000Z", day: "2026-01-01" });
    expect(eventOf({ ...fields, at }).ts).toBe("2025-12-31T23:59:59.999Z");
  });
});
