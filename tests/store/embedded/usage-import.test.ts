import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { utcDay } from "../../../src/platform/day";
import { captureLogs } from "../../../src/platform/log";
import type { EmbeddedUsageLog } from "../../../src/usage/log/embedded";
import { makeApp, type TestApp, tempDir } from "../../support/app";
import {
  clearOfMidnight,
  copyDatedFixture,
  type DatedFixture,
  datedFixture,
  settled,
  shiftDates,
  shiftName,
} from "../../support/dated-fixture";
import { storedEvents } from "../../usage/util";

/**
 * The SQLite store started on a DATA_DIR the JSONL store wrote (tests/fixtures/legacy-data-dir,
 * made through the real app): every usage event is imported once, and the usage routes answer
 * what the old store answered (expected.json). The fixture is replayed as if recorded today
 * (tests/support/dated-fixture.ts), so its events are today's and /v1/usage counts them.
 */
const FIXTURE = join(import.meta.dir, "../../fixtures/legacy-data-dir");
const DATA = join(FIXTURE, "data");

type Who = "free" | "pro" | "user";
const WHO: Who[] = ["free", "pro", "user"];

describe("a JSONL DATA_DIR imported into the SQLite store", () => {
  const recorded = JSON.parse(readFileSync(join(FIXTURE, "expected.json"), "utf8"));
  // dated in beforeAll: today's counters need the whole file to run on the day it was dated
  let dated: DatedFixture;
  let expected: typeof recorded;
  let day: string;
  const dir = tempDir("legacy-import-");
  let t: TestApp;
  let logs: ReturnType<typeof captureLogs>;
  beforeAll(async () => {
    await clearOfMidnight(20_000);
    dated = datedFixture(DATA, recorded.day);
    expected = shiftDates(recorded, dated);
    day = expected.day;
    copyDatedFixture(DATA, dir, dated);
    // every event in the past (in a day's first seconds, the fixture's last one is not yet);
    // the export lists them at once (USAGE_EXPORT_SETTLE_MS: 0): they are not in flight
    await settled(dated);
    logs = captureLogs();
    try {
      t = await makeApp({ DATA_DIR: dir, USAGE_EXPORT_SETTLE_MS: "0" });
    } finally {
      logs.restore();
    }
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const json = async (who: Who, path: string) => {
    const r = await t.get(path, expected.keys[who]);
    expect(r.status).toBe(200);
    return r.json();
  };

  /** the answers the fixture recorded, read from `t` */
  async function answers(who: Who) {
    const exported = await t.get(
      `/v1/analytics/events?from=${day}&to=${day}&limit=50000`,
      expected.keys[who],
    );
    return {
      analytics: await json(
        who,
        `/v1/analytics/usage?from=${day}&to=${day}&group_by=bucket,status`,
      ),
      misses: await json(who, `/v1/analytics/misses?from=${day}&to=${day}`),
      exported: (await exported.text()).split("\n").filter(Boolean).length,
    };
  }

  test("every event once, events/ kept as events.imported/, one log line per day file", async () => {
    const files = readdirSync(join(DATA, "events")).filter((f) =>
      /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(f),
    );
    const imported = logs.lines.filter((l) => l.msg === "imported usage events");
    expect(imported).toHaveLength(files.length);
    expect(existsSync(join(dir, "events"))).toBe(false);
    expect(readdirSync(join(dir, "events.imported")).sort()).toEqual(
      files.map((f) => shiftName(f, dated)).sort(),
    );
    const events = storedEvents((t.deps.store.usage as EmbeddedUsageLog).db);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const total = WHO.reduce((n, w) => n + expected.exportCounts[w], 0);
    expect(events.length).toBeGreaterThanOrEqual(total);
  });

  test("/v1/analytics/usage, misses and the export answer as the old store did", async () => {
    for (const who of WHO) {
      const a = await answers(who);
      expect(a.analytics).toEqual(expected.analytics[who]);
      expect(a.misses).toEqual(expected.misses[who]);
      expect(a.exported).toBe(expected.exportCounts[who]);
    }
  });

  test("/v1/usage (today's counters, rebuilt from the imported events) as the old store answered", async () => {
    expect(day).toBe(utcDay(Date.now()));
    for (const who of WHO) {
      const u = (await json(who, "/v1/usage")) as { endpoints: unknown };
      expect(u.endpoints).toMatchObject(expected.usage[who]);
    }
  });

  test("a restart imports nothing again and answers the same", async () => {
    const before = await answers("free");
    // the deps only: TestApp.close() would remove the DATA_DIR
    await t.deps.close();
    const logs2 = captureLogs();
    try {
      t = await makeApp({ DATA_DIR: dir, USAGE_EXPORT_SETTLE_MS: "0" });
    } finally {
      logs2.restore();
    }
    expect(logs2.lines.filter((l) => l.msg === "imported usage events")).toEqual([]);
    expect(await answers("free")).toEqual(before);
  });
});
