import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLogs } from "../../src/platform/log";
import { countsAgainstQuota } from "../../src/quota/service";
import { IdHashSet, tallyEventFile } from "../../src/store/embedded/event-scan";
import { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import type { UsageEvent } from "../../src/usage/port";
import { JsonlEncoder } from "../../src/usage/serialize";
import { tempDir } from "../support/app";
import { event } from "./util";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const DAY = "2025-06-01";
const at = (over: Partial<UsageEvent> = {}) => event({ ts: `${DAY}T08:00:00.000Z`, ...over });

/** the tally JSON.parse of every line gives: by account, key, bucket and status */
function expected(events: UsageEvent[]) {
  const seen = new Set<string>();
  const m = new Map<string, { events: number; requests: number }>();
  for (const e of events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    const k = [e.accountId, e.keyId, e.bucket, e.status].join("|");
    const r = m.get(k) ?? { events: 0, requests: 0 };
    r.events++;
    r.requests += e.count ?? 1;
    m.set(k, r);
  }
  return m;
}

function tallied(path: string) {
  const r = tallyEventFile(path, DAY, new IdHashSet());
  const m = new Map<string, { events: number; requests: number }>();
  for (const t of r.rows) {
    const k = [t.accountId, t.keyId, t.bucket, t.status].join("|");
    const c = m.get(k) ?? { events: 0, requests: 0 };
    c.events += t.events;
    c.requests += t.requests;
    m.set(k, c);
  }
  return { ...r, m };
}

function file(text: string) {
  const dir = tempDir("scan-");
  dirs.push(dir);
  const path = join(dir, `${DAY}.jsonl`);
  writeFileSync(path, text);
  return path;
}

describe("IdHashSet", () => {
  test("add is true once per id, has finds what was added; it grows past its first size", () => {
    const ids = new IdHashSet(4);
    const all = Array.from({ length: 20_000 }, () => Bun.randomUUIDv7());
    for (const id of all) expect(ids.add(id)).toBe(true);
    expect(ids.size).toBe(20_000);
    for (const id of all.slice(0, 500)) {
      expect(ids.add(id)).toBe(false);
      expect(ids.has(id)).toBe(true);
    }
    expect(ids.has(Bun.randomUUIDv7())).toBe(false);
    expect(ids.size).toBe(20_000);
  });
});

describe("tallyEventFile", () => {
  test("the service's own lines: the same counts as JSON.parse of every line", () => {
    const events = [
      ...Array.from({ length: 300 }, (_, i) =>
        at({
          accountId: `acc-${i % 7}`,
          keyId: i % 11 === 0 ? "" : `key-${i % 7}`,
          bucket: (["svg", "png", "search", "domain"] as const)[i % 4],
          status: [200, 404, 429, 500, 499][i % 5] as number,
          slug: i % 3 ? `s-${i}` : null,
          route: "/v1/x/:slug",
        }),
      ),
      at({ status: 429, count: 37 }),
    ];
    const text = new TextDecoder().decode(new JsonlEncoder().encode(events));
    const r = tallied(file(text));
    expect(r.events).toBe(events.length);
    expect(r.m).toEqual(expected(events));
    expect(r.m.get(["acc-1", "key-1", "svg", 429].join("|"))?.requests).toBeGreaterThanOrEqual(37);
  });

  test("other field orders, escapes and other days take the slow path with the same result", () => {
    const plain = at({ accountId: "acc-a" });
    const escaped = at({ accountId: "acc-a", slug: 'say "hi"\\' });
    const reordered = at({ accountId: "acc-b", status: 404 });
    const { id, ...rest } = reordered;
    const other = event({ ts: "2025-06-02T00:00:01.000Z" });
    const lines = [
      JSON.stringify(plain),
      JSON.stringify(escaped),
      JSON.stringify({ ...rest, id }),
      JSON.stringify(other),
    ];
    const r = tallied(file(`${lines.join("\n")}\n`));
    expect(r.events).toBe(4);
    expect(r.m).toEqual(expected([plain, escaped, reordered]));
    // one row per account, key, bucket and status, whichever path read the line
    expect(r.rows).toHaveLength(2);
    expect(r.others).toEqual([other]);
  });

  test("duplicate ids count once; unreadable and torn lines are skipped with a warning", () => {
    const a = at();
    const b = at({ bucket: "catalog" });
    const unknownBucket = JSON.stringify(at()).replace('"bucket":"svg"', '"bucket":"nope"');
    const torn = JSON.stringify(at()).slice(0, 60);
    const logs = captureLogs();
    try {
      const r = tallied(
        file(
          `${[JSON.stringify(a), JSON.stringify(b), JSON.stringify(a), "", unknownBucket, "{oops", torn].join("\n")}`,
        ),
      );
      expect(r.events).toBe(2);
      expect(r.m).toEqual(expected([a, b]));
    } finally {
      logs.restore();
    }
    const warned = logs.lines.filter(
      (l) => l.msg === "skipping unreadable line in usage event log",
    );
    expect(warned.map((l) => [l.line, l.torn])).toEqual([
      [5, false],
      [6, false],
      [7, true],
    ]);
  });

  test("ids already in the set (a checked append's) are skipped", () => {
    const a = at();
    const ids = new IdHashSet();
    ids.add(a.id);
    const r = tallyEventFile(file(`${JSON.stringify(a)}\n`), DAY, ids);
    expect(r.events).toBe(0);
    expect(r.rows).toEqual([]);
  });
});

describe("the embedded store's tally of the recent days", () => {
  test("tallyOfDay equals counting eventsOfDay, after a restart and after appends", async () => {
    const dir = tempDir("scan-store-");
    dirs.push(dir);
    const today = new Date().toISOString();
    const mk = (i: number) =>
      event({
        ts: today,
        accountId: `acc-${i % 3}`,
        keyId: `key-${i % 3}`,
        bucket: i % 2 ? "svg" : "search",
        status: [200, 429, 404, 500][i % 4] as number,
      });
    const first = new EmbeddedUsageStore(dir);
    await first.append(Array.from({ length: 40 }, (_, i) => mk(i)));
    await first.close();
    const store = new EmbeddedUsageStore(dir);
    await store.append(
      Array.from({ length: 13 }, (_, i) => mk(i + 1)),
      { fresh: true },
    );
    const day = today.slice(0, 10);
    const fromEvents = new Map<string, number>();
    for await (const e of store.eventsOfDay(day)) {
      const k = [e.accountId, e.keyId, e.bucket, e.status].join("|");
      fromEvents.set(k, (fromEvents.get(k) ?? 0) + 1);
    }
    const fromTally = new Map<string, number>();
    for (const t of store.tallyOfDay(day) ?? [])
      fromTally.set([t.accountId, t.keyId, t.bucket, t.status].join("|"), t.events ?? 1);
    expect(fromTally).toEqual(fromEvents);
    expect([...fromEvents.values()].reduce((a, b) => a + b)).toBe(53);
    // quota-relevant: some of each kind
    expect(store.tallyOfDay(day)?.some((t) => !countsAgainstQuota(t.status))).toBe(true);
    // days before yesterday are not tallied: callers read the log
    expect(store.tallyOfDay("2000-01-01")).toBeNull();
    await store.close();
  });
});
