import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setLogLevel } from "../../src/platform/log";
import { EmbeddedUsageStore, readEventFile } from "../../src/store/embedded/usage";
import type { UsageEvent } from "../../src/usage/port";
import { usageEvent } from "../../src/usage/serialize";
import { tempDir } from "../support/app";
import { collect, event, until } from "./util";

/** The event's line in a day file: its canonical JSON. */
const eventLine = (e: UsageEvent) => `${JSON.stringify(usageEvent(e.id, e.ts, e.day, e))}\n`;

const dirs: string[] = [];
const stores: EmbeddedUsageStore[] = [];
function open(dir: string, syncMs?: number) {
  const s = EmbeddedUsageStore.open(dir, { syncMs });
  stores.push(s);
  return s;
}

/** Run `fn` capturing the warnings the log writes to stderr. */
async function warnings(fn: () => unknown): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (line: string) => lines.push(String(line));
  try {
    await fn();
  } finally {
    console.error = original;
  }
  return lines.map((l) => JSON.parse(l));
}

beforeAll(() => setLogLevel("warn"));
afterAll(() => setLogLevel("info"));
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("embedded usage log", () => {
  test("one append-only JSONL file per UTC day under DATA_DIR/events", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const s = open(dir);
    const a = event({ ts: "2025-01-31T23:59:59.999Z" });
    const b = event({ ts: "2025-02-01T00:00:00.000Z" });
    await s.append([a, b]);
    expect(readdirSync(join(dir, "events")).sort()).toEqual([
      "2025-01-31.jsonl",
      "2025-02-01.jsonl",
    ]);
    const text = readFileSync(join(dir, "events", "2025-01-31.jsonl"), "utf8");
    expect(text).toBe(eventLine(a));
    const c = event({ ts: "2025-01-31T10:00:00.000Z" });
    await s.append([c]);
    expect(readFileSync(join(dir, "events", "2025-01-31.jsonl"), "utf8")).toBe(
      `${eventLine(a)}${eventLine(c)}`,
    );
  });

  test("a restart replays the files: same projection, same events, replays stay idempotent", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const first = open(dir);
    const events = [
      event({ ts: "2025-03-01T08:00:00.000Z", status: 200 }),
      event({ ts: "2025-03-01T09:00:00.000Z", status: 429 }),
      event({ ts: "2025-03-02T09:00:00.000Z", bucket: "png", status: 500 }),
    ];
    await first.append(events);
    const daily = await first.daily("acc-1", "2025-03-01", "2025-03-31");
    await first.close();

    const second = open(dir);
    expect(second.size).toBe(3);
    expect(await second.daily("acc-1", "2025-03-01", "2025-03-31")).toEqual(daily);
    expect(await collect(second.eventsOfDay("2025-03-01"))).toEqual(events.slice(0, 2));
    expect(await second.append(events)).toBe(0);
    expect(readEventFile(join(dir, "events", "2025-03-01.jsonl"))).toHaveLength(2);
  });

  test("a torn last line (crash mid-write) is skipped with a warning, never fatal", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const first = open(dir);
    const ok = [
      event({ ts: "2025-04-01T01:00:00.000Z" }),
      event({ ts: "2025-04-01T02:00:00.000Z" }),
    ];
    await first.append(ok);
    await first.close();
    const file = join(dir, "events", "2025-04-01.jsonl");
    const torn = JSON.stringify(event({ ts: "2025-04-01T03:00:00.000Z" })).slice(0, 57);
    appendFileSync(file, torn);

    let second: EmbeddedUsageStore | undefined;
    const warned = await warnings(() => {
      second = open(dir);
    });
    expect(warned).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "skipping unreadable line in usage event log",
        file,
        line: 3,
        torn: true,
      }),
    ]);
    expect(second?.size).toBe(2);
    expect((await second?.daily("acc-1", "2025-04-01", "2025-04-01"))?.[0]?.requests).toBe(2);

    // the next append starts on a fresh line, so it is not glued to the torn one
    const after = event({ ts: "2025-04-01T04:00:00.000Z" });
    await second?.append([after]);
    await second?.close();
    const third = open(dir);
    expect(third.size).toBe(3);
    expect((await collect(third.eventsOfDay("2025-04-01"))).map((e) => e.id)).toEqual([
      ...ok.map((e) => e.id),
      after.id,
    ]);
    expect(readFileSync(file, "utf8")).toBe(
      `${ok.map(eventLine).join("")}${torn}\n${eventLine(after)}`,
    );
  });

  test("lines that are not usage events are skipped too", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const first = open(dir);
    const ok = event({ ts: "2025-04-05T01:00:00.000Z" });
    await first.append([ok]);
    await first.close();
    appendFileSync(join(dir, "events", "2025-04-05.jsonl"), '{"id":"x","bucket":"nope"}\n\n');
    let second: EmbeddedUsageStore | undefined;
    const warned = await warnings(() => {
      second = open(dir);
    });
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ line: 2, torn: false });
    expect(second?.size).toBe(1);
  });

  test("events of an older day are de-duplicated against that day's file", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const s = open(dir);
    const old = event({ ts: "2024-12-01T00:00:00.000Z" });
    await s.append([old]);
    // four newer days push the old day's ids out of memory
    for (const d of ["2025-01-01", "2025-01-02", "2025-01-03", "2025-01-04"])
      await s.append([event({ ts: `${d}T00:00:00.000Z` })]);
    expect(await s.append([old])).toBe(0);
    expect(readEventFile(join(dir, "events", "2024-12-01.jsonl"))).toHaveLength(1);
  });

  test("USAGE_SYNC_MS 0: every append is fdatasync'd before it resolves", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const s = open(dir, 0);
    for (let i = 0; i < 3; i++) await s.append([event({ ts: "2025-05-01T00:00:00.000Z" })]);
    expect(s.syncStats).toEqual({ syncs: 3, unsynced: 0 });
  });

  test("group commit: appends inside the sync window are written at once and share one trailing fdatasync", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    // a 1 s window: three small appends fit inside it even on a slow, shared CI machine
    const s = open(dir, 1_000);
    const file = join(dir, "events", "2025-05-02.jsonl");
    const batches = [0, 1, 2].map(() => [
      event({ ts: "2025-05-02T00:00:00.000Z" }),
      event({ ts: "2025-05-02T00:00:01.000Z" }),
    ]);
    for (const b of batches) await s.append(b);
    // written (a crash of the process loses nothing) but not yet fdatasync'd
    expect(readEventFile(file).map((e) => e.id)).toEqual(batches.flat().map((e) => e.id));
    expect(s.syncStats).toEqual({ syncs: 0, unsynced: 6 });
    // the trailing sync comes when the window ends, without another append
    await until(() => s.syncStats.syncs === 1, 5_000, "the trailing fdatasync");
    expect(s.syncStats.unsynced).toBe(0);
    // the window has passed: the next append syncs before it resolves
    await Bun.sleep(1_050);
    await s.append([event({ ts: "2025-05-02T00:00:02.000Z" })]);
    expect(s.syncStats).toEqual({ syncs: 2, unsynced: 0 });
  });

  test("close() fdatasyncs what the window still holds", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const s = EmbeddedUsageStore.open(dir, { syncMs: 60_000 });
    await s.append([event({ ts: "2025-05-03T00:00:00.000Z" })]);
    await s.append([event({ ts: "2025-05-04T00:00:00.000Z" })]);
    expect(s.syncStats).toEqual({ syncs: 0, unsynced: 2 });
    await s.close();
    expect(s.syncStats).toEqual({ syncs: 2, unsynced: 0 });
  });

  test("a day file closed to make room for a newer day is fdatasync'd first", async () => {
    const dir = tempDir("usage-e-");
    dirs.push(dir);
    const s = open(dir, 60_000);
    for (const d of ["2025-06-01", "2025-06-02", "2025-06-03"])
      await s.append([event({ ts: `${d}T00:00:00.000Z` })]);
    // two files stay open; the oldest was synced as it was closed
    expect(s.syncStats).toEqual({ syncs: 1, unsynced: 2 });
  });
});
