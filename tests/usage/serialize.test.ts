import { describe, expect, test } from "bun:test";
import { newId } from "../../src/platform/ids";
import type { UsageEvent } from "../../src/usage/port";
import { eventOf, JsonlEncoder, usageEvent } from "../../src/usage/serialize";

/** What the embedded store writes for these events, from a fresh encoder. */
const eventBytes = (events: UsageEvent[]) => new JsonlEncoder().encode(events);
const eventLines = (events: UsageEvent[]) => Buffer.from(eventBytes(events)).toString("utf8");
const eventLine = (e: UsageEvent) => eventLines([e]);

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

describe("eventLine", () => {
  test("is one line of JSON that parses back to the event", () => {
    const line = eventLine(base);
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    expect(JSON.parse(line)).toEqual(base);
  });

  test.each([
    ['a "quoted" slug', 'x"y'],
    ["a backslash", "a\\b"],
    ["a newline", "a\nb"],
    ["unicode", "bücher✓"],
    ["a control character", "a\u0001b"],
  ])("escapes %s like JSON.stringify", (_name, slug) => {
    const e = { ...base, slug, variant: null, keyId: "" };
    expect(JSON.parse(eventLine(e))).toEqual(e);
    expect(eventLine(e).slice(0, -1)).not.toContain("\n");
  });

  test("non-finite numbers become null instead of invalid JSON", () => {
    expect(JSON.parse(eventLine({ ...base, latencyMs: Number.NaN })).latencyMs).toBeNull();
  });
});

describe("eventLines", () => {
  test("one line per event, each the event's own JSON, in order", () => {
    const events = [base, { ...base, id: newId(), slug: null }, { ...base, id: newId() }];
    const text = eventLines(events);
    expect(text).toBe(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    expect(
      text
        .split("\n")
        .slice(0, -1)
        .map((l) => JSON.parse(l)),
    ).toEqual(events);
    expect(eventLines([])).toBe("");
  });

  test("a value that looks like an object boundary stays inside its line", () => {
    const tricky = ['},{"id":"x', '"},{"id":', "}\n{", '\\"},{\\"id\\":'];
    const events = tricky.map((slug) => ({ ...base, id: newId(), slug, variant: slug }));
    const lines = eventLines(events).split("\n").slice(0, -1);
    expect(lines).toHaveLength(events.length);
    expect(lines.map((l) => JSON.parse(l))).toEqual(events);
  });

  test("fields are written in one fixed order, id first, whatever the object's key order", () => {
    const { id, ...rest } = base;
    const reordered = { ...rest, id } as UsageEvent;
    const extra = { ...base, secret: "x" } as UsageEvent;
    const text = eventLines([reordered, extra]);
    expect(text).toBe(`${JSON.stringify(base)}\n${JSON.stringify(base)}\n`);
  });

  test("eventBytes is the UTF-8 of those lines, multi-byte characters included", () => {
    const events = ["bücher✓", "日本", "😀"].map((slug) => ({ ...base, id: newId(), slug }));
    const expected = events.map((e) => `${JSON.stringify(e)}\n`).join("");
    expect(Buffer.from(eventBytes(events)).equals(Buffer.from(expected, "utf8"))).toBe(true);
    expect(eventBytes([])).toHaveLength(0);
  });
});

describe("JsonlEncoder", () => {
  const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
  const linesOf = (events: UsageEvent[]) => events.map((e) => `${JSON.stringify(e)}\n`).join("");

  test("reuses one buffer across calls and grows it for a batch that does not fit", () => {
    const enc = new JsonlEncoder();
    const small = [base, { ...base, id: newId() }];
    expect(text(enc.encode(small, true))).toBe(linesOf(small));
    // about 300 bytes per event: 1,000 events do not fit the first 64 KiB
    const big = Array.from({ length: 1000 }, (_, i) => ({ ...base, id: newId(), slug: `s${i}✓` }));
    expect(text(enc.encode(big, true))).toBe(linesOf(big));
    expect(text(enc.encode(small, true))).toBe(linesOf(small));
  });

  test("events said to be canonical but with id not first still get one line each", () => {
    const { id, ...rest } = base;
    const idLast = [{ ...rest, id } as UsageEvent, { ...rest, id: newId() } as UsageEvent];
    const lines = text(new JsonlEncoder().encode(idLast, true)).split("\n").slice(0, -1);
    expect(lines.map((l) => JSON.parse(l))).toEqual(idLast);
    expect(lines.every((l) => l.startsWith('{"id":'))).toBe(true);
  });

  test("a non-string value holding an object boundary (a tampered spill file) stays in its line", () => {
    const odd = { ...base, slug: [{}, { id: 1 }] } as unknown as UsageEvent;
    const events = [base, odd, { ...base, id: newId() }];
    const lines = eventLines(events).split("\n").slice(0, -1);
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => JSON.parse(l))).toEqual(events);
  });
});

describe("usageEvent", () => {
  test("builds the stored fields in the stored order, id first", () => {
    const { id: _id, ts, day, ...input } = base;
    const e = usageEvent("the-id", ts, day, { ...input, extra: "dropped" } as typeof input);
    expect(Object.keys(e)).toEqual(Object.keys(base));
    expect(e).toEqual({ ...base, id: "the-id" });
    expect(eventLine(e)).toBe(`${JSON.stringify({ ...base, id: "the-id" })}\n`);
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
