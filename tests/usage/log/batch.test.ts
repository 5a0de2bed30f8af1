import { describe, expect, test } from "bun:test";
import { TOP_BRANDS } from "../../../src/usage/analytics/cells";
import type { UsageEvent } from "../../../src/usage/event";
import {
  type Batch,
  BatchBuilder,
  batchesOfEvents,
  bucketIndex,
  decodeBatch,
  decodeFrames,
  encodeBatch,
  encodeFrames,
  eventId,
  eventsOf,
  nextQ,
  parseEventId,
  sameBatch,
} from "../../../src/usage/log/batch";
import { exportLines } from "../../../src/usage/log/export-lines";
import { RowLines, scanRow } from "../../../src/usage/log/export-rows";
import {
  decodePeriod,
  encodePeriod,
  foldBatch,
  OTHER,
  PeriodCells,
  rollupNo,
  type StringIds,
} from "../../../src/usage/log/period";
import { decodeRow, encodeRow } from "../../../src/usage/log/rows";

const event = (over: Partial<UsageEvent> = {}): UsageEvent => ({
  id: "019a0000-0000-7000-8000-000000000000",
  ts: "2026-11-22T10:00:00.123Z",
  day: "2026-11-22",
  accountId: "acc",
  keyId: "0123456789abcdef",
  tier: "free",
  bucket: "svg",
  route: "/v1/svg/:slug",
  slug: "GitHub",
  variant: "mono",
  format: "svg",
  status: 200,
  latencyMs: 1.25,
  ...over,
});

/** Strings as ids in memory (what a store keeps them as). */
function ids(): StringIds & { size: number } {
  const byStr = new Map<string, number>();
  const list: string[] = [];
  return {
    id(s) {
      let i = byStr.get(s);
      if (i === undefined) {
        i = list.length;
        list.push(s);
        byStr.set(s, i);
      }
      return i;
    },
    str: (i) => list[i] as string,
    get size() {
      return list.length;
    },
  };
}

describe("event ids", () => {
  test("derived from batch time, number and position: UUIDv7-shaped, unique, sorting by them", () => {
    const t0 = Date.parse("2026-01-01T00:00:00.000Z");
    const qs = [0, 1, 2 ** 14 - 1, 2 ** 14, 2 ** 26, 2 ** 28, 2 ** 40 - 1];
    const seen: string[] = [];
    for (const t of [t0, t0 + 1])
      for (const q of qs)
        for (const pos of [0, 1, 0xfffe, 0xffff]) {
          const id = eventId(t, q, pos);
          expect(id).toMatch(
            /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
          );
          expect(parseEventId(id)).toEqual({ t0: t, q, pos });
          seen.push(id);
        }
    // made in (time, number, position) order: already sorted, all distinct
    expect([...seen].sort()).toEqual(seen);
    expect(new Set(seen).size).toBe(seen.length);
    expect(parseEventId("not an id")).toBeNull();
  });
});

describe("batches", () => {
  test("per account and UTC day, by time; the events read back field for field", () => {
    const b = new BatchBuilder();
    const at = Date.parse("2026-11-22T23:59:59.999Z");
    const add = (account: string, t: number, status = 200, miss: string[] | null = null) =>
      b.add(account, t, {
        key: b.ref("k1"),
        tier: b.ref("pro"),
        route: b.ref("/v1/svg/:slug"),
        slug: b.ref("stripe"),
        variant: b.ref(null),
        format: b.ref("svg"),
        bucket: bucketIndex("svg"),
        status,
        lat: 1234,
        miss: miss?.map((m) => b.ref(m)) ?? null,
      });
    add("a", at);
    add("a", at - 5, 404, ["slug:stripe"]);
    add("b", at);
    add("a", at + 1);
    const batches = b.done();
    expect(batches.map((x) => [x.account, x.n])).toEqual([
      ["a", 2],
      ["b", 1],
      ["a", 1],
    ]);
    const [first] = batches as [Batch];
    const events = eventsOf(first);
    expect(events.map((e) => e.ts)).toEqual([
      "2026-11-22T23:59:59.994Z",
      "2026-11-22T23:59:59.999Z",
    ]);
    expect(events[0]).toEqual({
      id: eventId(at - 5, first.q, 0),
      ts: "2026-11-22T23:59:59.994Z",
      day: "2026-11-22",
      accountId: "a",
      keyId: "k1",
      tier: "pro",
      bucket: "svg",
      route: "/v1/svg/:slug",
      slug: "stripe",
      variant: null,
      format: "svg",
      miss: ["slug:stripe"],
      status: 404,
      latencyMs: 1.234,
    });
    expect(Object.keys(events[1] as object)).not.toContain("miss");
    expect(eventsOf(batches[2] as Batch)[0]?.day).toBe("2026-11-23");
  });

  test("events of the per-event log keep their ids, fields and order; latency to the microsecond", () => {
    const list = [
      event({ id: "019a0000-0000-7000-8000-000000000002", ts: "2026-11-22T10:00:00.125Z" }),
      event({ id: "019a0000-0000-7000-8000-000000000001", status: 429, count: 7 }),
      event({
        id: "019a0000-0000-7000-8000-000000000003",
        slug: null,
        variant: null,
        format: undefined,
        bucket: "search",
        route: "/v1/search",
        miss: ["query:acme corp"],
        latencyMs: 0.01,
      }),
    ];
    const [b] = batchesOfEvents(list) as [Batch];
    const back = eventsOf(b);
    const { format: _f, ...noFormat } = list[2] as UsageEvent;
    expect(back).toEqual([list[1], list[0], noFormat] as UsageEvent[]);
    // the stored field order (the export's): miss between variant and status
    expect(Object.keys(back[2] as object)).toEqual([
      "id",
      "ts",
      "day",
      "accountId",
      "keyId",
      "tier",
      "bucket",
      "route",
      "slug",
      "variant",
      "miss",
      "status",
      "latencyMs",
    ]);
    expect(JSON.stringify(back[0])).toBe(JSON.stringify(list[1]));
  });

  test("bytes and frames: a batch read back whole; a torn or corrupt frame ends the read", () => {
    const batches = batchesOfEvents([
      event(),
      event({ id: "019a0000-0000-7000-8000-000000000009", accountId: "other", miss: ["slug:x"] }),
    ]);
    for (const b of batches) expect(sameBatch(decodeBatch(encodeBatch(b)), b)).toBe(true);
    const frames = encodeFrames(batches);
    expect(decodeFrames(frames)).toMatchObject({ whole: true, end: frames.length });
    const torn = decodeFrames(frames.subarray(0, frames.length - 3));
    expect(torn.whole).toBe(false);
    expect(torn.batches).toHaveLength(1);
    const bad = frames.slice();
    bad[bad.length - 2] = (bad[bad.length - 2] as number) ^ 0xff;
    expect(decodeFrames(bad).batches).toHaveLength(1);
    // the unused end of a spill reserve (zeros) ends the read too
    const padded = new Uint8Array(frames.length + 16);
    padded.set(frames);
    expect(decodeFrames(padded)).toMatchObject({ whole: false, end: frames.length });
  });

  test("sameBatch tells a retry from another batch with the same id; nextQ is stable", () => {
    const [a] = batchesOfEvents([event()]) as [Batch];
    const [b] = batchesOfEvents([event({ latencyMs: 9 })]) as [Batch];
    b.q = a.q;
    expect(sameBatch(a, decodeBatch(encodeBatch(a)))).toBe(true);
    expect(sameBatch(a, b)).toBe(false);
    expect(nextQ(a)).toBe(nextQ(decodeBatch(encodeBatch(a))));
    expect(nextQ(a)).not.toBe(nextQ(b));
  });

  test("a store row (strings as ids) reads back as the batch", () => {
    const s = ids();
    const batches = batchesOfEvents([
      event(),
      event({
        id: "019a0000-0000-7000-8000-000000000005",
        status: 429,
        count: 3,
        miss: ["slug:a", "slug:b"],
      }),
      event({ id: "019a0000-0000-7000-8000-000000000006", keyId: "other", variant: null }),
    ]);
    for (const b of batches) {
      const back = decodeRow(encodeRow(b, s), b.account, b.t0, b.q, s);
      expect(back).toHaveLength(1);
      expect(sameBatch(back[0] as Batch, b)).toBe(true);
    }
  });
});

describe("export lines", () => {
  test("each line is JSON.stringify of the event; after and max cut the batch", () => {
    const b = new BatchBuilder();
    const t = Date.parse("2026-11-22T23:59:58.000Z");
    const times = [t, t + 7, t + 42, t + 999, t + 1000, t + 1999, t + 2000];
    times.forEach((at, i) => {
      b.add('acc "x"', at, {
        key: b.ref(i === 1 ? null : "k1"),
        tier: b.ref("pro"),
        route: b.ref("/v1/svg/:slug"),
        slug: b.ref(i === 2 ? null : 'caf\u00e9 \u2603 "q"\n'),
        variant: b.ref(i === 3 ? "mono" : null),
        format: b.ref(i === 4 ? null : "svg"),
        bucket: bucketIndex(i === 4 ? "search" : "svg"),
        status: i === 5 ? 429 : 200,
        lat: [1234, 1, 0, 10, 999_999, 1_000_000, 123][i] as number,
        miss: i === 3 ? [b.ref("slug:a"), b.ref("query:x,y")] : i === 6 ? [] : null,
      });
    });
    const withIds = batchesOfEvents([
      event(),
      event({
        id: "019a0000-0000-7000-8000-000000000005",
        status: 429,
        count: 3,
        miss: ["slug:a"],
      }),
    ]);
    const batches = [...b.done(), ...withIds];
    // the same lines read straight from a store row (export-rows.ts), any slice of them
    const s = ids();
    for (const batch of batches) {
      const row = encodeRow(batch, s);
      const all = eventsOf(batch).map((e) => `${JSON.stringify(e)}\n`);
      const scan = { n: 0, last: 0 };
      if (batch.ids) {
        expect(scanRow(row, batch.t0, scan)).toBe(false);
        continue;
      }
      expect(scanRow(row, batch.t0, scan)).toBe(true);
      expect(scan).toEqual({ n: batch.n, last: batch.at[batch.n - 1] as number });
      const lines = new RowLines(batch.account, (i) => s.str(i));
      const text = () => new TextDecoder().decode(lines.take());
      lines.lines(row, batch.t0, batch.q, 0, batch.n);
      expect(text()).toBe(all.join(""));
      const take = Math.min(2, batch.n - 1);
      lines.lines(row, batch.t0, batch.q, 1, take);
      expect(text()).toBe(all.slice(1, 1 + take).join(""));
    }
    for (const batch of batches) {
      const all = eventsOf(batch).map((e) => `${JSON.stringify(e)}\n`);
      const out: string[] = [];
      expect(exportLines(batch, null, 1000, out)).toBe(all.length);
      expect(out.join("")).toBe(all.join(""));
      const after = eventsOf(batch)[0]?.id as string;
      const cut: string[] = [];
      expect(exportLines(batch, after, 1, cut)).toBe(Math.min(1, all.length - 1));
      expect(cut.join("")).toBe(all.slice(1, 2).join(""));
    }
  });
});

describe("period cells", () => {
  test("the usage_daily rules and the histogram; rows read back; the 51st brand of a period counts as OTHER", () => {
    const list: UsageEvent[] = [];
    for (let i = 0; i < TOP_BRANDS + 2; i++)
      list.push(
        event({ id: `019a0000-0000-7000-8000-${String(i).padStart(12, "0")}`, slug: `b${i}` }),
      );
    list.push(event({ id: "019a0000-0000-7000-8000-100000000000", slug: "b0", status: 404 }));
    list.push(
      event({ id: "019a0000-0000-7000-8000-100000000001", slug: null, status: 429, count: 4 }),
    );
    const day = new PeriodCells();
    const hours = new Map<number, PeriodCells>();
    for (const b of batchesOfEvents(list))
      foldBatch(b, {
        day: () => day,
        hour: (h) => {
          const c = hours.get(h) ?? new PeriodCells();
          hours.set(h, c);
          return c;
        },
      });
    expect(day.brands).toHaveLength(TOP_BRANDS);
    const bs = [
      ...(
        day.views[rollupNo("bs")] as Map<string, { f: unknown[]; n: number; e: number; r: number }>
      ).values(),
    ];
    expect(bs.map((c) => [c.f, c.n, c.e, c.r])).toEqual([
      [["svg", 200], TOP_BRANDS + 2, 0, 0],
      [["svg", 404], 1, 1, 0],
      [["svg", 429], 4, 0, 4],
    ]);
    const b = [...(day.views[rollupNo("b")] as Map<string, { f: unknown[]; n: number }>).values()];
    expect(b.find((c) => c.f[0] === OTHER)?.n).toBe(2);
    expect(b.find((c) => c.f[0] === null)?.n).toBe(4);
    expect(b.find((c) => c.f[0] === "b0" && c.f[1] === 404)?.n).toBe(1);
    const s = ids();
    const back = decodePeriod(encodePeriod(day, s), s);
    expect(back.brands).toEqual(day.brands);
    // the same cells (the `all` rollup's sorted by brand in the row)
    const sorted = (m: Map<string, unknown>) =>
      [...m].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    expect(back.views.map(sorted)).toEqual(day.views.map(sorted));
    // one rollup alone
    const only = decodePeriod(encodePeriod(day, s), s, rollupNo("b"));
    expect([...(only.views[rollupNo("b")] as Map<string, unknown>).values()]).toEqual(b);
    expect(only.views[rollupNo("bs")]?.size).toBe(0);
    expect(hours.size).toBe(1);
  });
});
