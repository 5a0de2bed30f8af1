import { describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlLog } from "../../src/platform/jsonl";
import { captureLogs } from "../../src/platform/log";
import type { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import type { Cell } from "../../src/usage/analytics/cells";
import type { UsageEvent } from "../../src/usage/port";
import { BatchingRecorder } from "../../src/usage/writer";
import { tempDir } from "../support/app";
import { collect, event, storedEvents, storeOpener } from "./util";

const ROOT = join(import.meta.dir, "../..");
const openStore = storeOpener();
const open = (dir: string, durable?: boolean) => openStore(dir, { durable });

/** Requests counted by usage_daily, by the day.bs and hour.all cells, and events in the log. */
async function totals(s: EmbeddedUsageStore, accountId: string, from: string, to: string) {
  const sum = (rows: { cells: unknown }[]) =>
    rows.flatMap((r) => [...(r.cells as Map<string, Cell>).values()]).reduce((n, c) => n + c.n, 0);
  return {
    log: storedEvents(s.db).filter((e) => e.accountId === accountId && e.day >= from && e.day <= to)
      .length,
    daily: (await s.daily(accountId, from, to)).reduce((n, r) => n + r.requests, 0),
    day: sum(await s.cells(accountId, "day.bs", from, to)),
    hour: sum(await s.cells(accountId, "hour.all", `${from}T00`, `${to}T23`)),
  };
}

/** `log` events in the log, counted as `requests` by usage_daily and the day and hour cells. */
async function expectCounted(
  s: EmbeddedUsageStore,
  accountId: string,
  from: string,
  to: string,
  log: number,
  requests = log,
) {
  const t = await totals(s, accountId, from, to);
  expect(t).toEqual({ log, daily: requests, day: requests, hour: requests });
}

describe("embedded usage log (SQLite)", () => {
  test("a restart sees the same events, projections and export; replays stay idempotent", async () => {
    const dir = tempDir("usage-e-");
    const first = open(dir);
    const events = [
      event({ ts: "2025-03-01T08:00:00.000Z", status: 200, miss: ["slug:nope"] }),
      event({ ts: "2025-03-01T09:00:00.000Z", status: 429, count: 3 }),
      event({ ts: "2025-03-02T09:00:00.000Z", bucket: "png", status: 500 }),
    ];
    await first.append(events);
    const q = { from: "2025-03-01", to: "2025-03-31", after: null, before: "2026-01-01T00:00:00Z" };
    const before = {
      daily: await first.daily("acc-1", "2025-03-01", "2025-03-31"),
      cells: await first.cells("acc-1", "hour.all", "2025-03-01T00", "2025-03-02T23"),
      misses: await first.misses(null, "2025-03-01", "2025-03-31"),
      page: await first.exportEvents("acc-1", { ...q, limit: 10 }),
    };
    await first.close();

    const second = open(dir);
    expect(second.size).toBe(3);
    expect(await second.daily("acc-1", "2025-03-01", "2025-03-31")).toEqual(before.daily);
    expect(await second.cells("acc-1", "hour.all", "2025-03-01T00", "2025-03-02T23")).toEqual(
      before.cells,
    );
    expect(await second.misses(null, "2025-03-01", "2025-03-31")).toEqual(before.misses);
    expect(before.page).toEqual(events);
    expect(await second.exportEvents("acc-1", { ...q, limit: 10 })).toEqual(events);
    expect(await collect(second.eventsOfDay("2025-03-01"))).toEqual(events.slice(0, 2));
    expect(await second.append(events)).toBe(0);
    expect(second.size).toBe(3);
    await expectCounted(second, "acc-1", "2025-03-01", "2025-03-02", 3, 5);
  });

  test("a replayed event is stored in the stored field order, id first, unknown fields dropped; any text round-trips", async () => {
    const s = open(tempDir("usage-e-"));
    const base = event({ ts: "2025-03-05T10:00:00.000Z", slug: 'x"},{"id":\n\\ bücher\u0001' });
    const { id, ...rest } = base;
    const replayed = { ...rest, id, secret: "x" } as UsageEvent;
    expect(await s.append([replayed])).toBe(1);
    const row = s.db.get<{ e: string }>("SELECT e FROM usage_events WHERE id = ?", id);
    expect(row?.e).toBe(JSON.stringify(base));
    const q = { from: "2025-03-05", to: "2025-03-05", after: null, before: "2026-01-01T00:00:00Z" };
    expect(await s.exportEvents("acc-1", { ...q, limit: 5 })).toEqual([base]);
  });

  test("a retried batch counts once: usage_daily, cells and misses, also mixed with new events", async () => {
    const s = open(tempDir("usage-e-"));
    const batch = Array.from({ length: 50 }, (_, i) =>
      event({
        ts: `2025-04-01T0${i % 10}:00:00.000Z`,
        status: i % 7 === 0 ? 404 : 200,
        miss: ["domain:a.test"],
      }),
    );
    expect(await s.append(batch, { fresh: true })).toBe(50);
    // the same batch again (its first answer lost), then with new events among the old
    expect(await s.append(batch)).toBe(0);
    const more = [event({ ts: "2025-04-01T11:00:00.000Z" }), ...batch];
    expect(await s.append(more)).toBe(1);
    await expectCounted(s, "acc-1", "2025-04-01", "2025-04-01", 51);
    expect(await s.misses("acc-1", "2025-04-01", "2025-04-01")).toEqual(
      new Map([["domain:a.test", 50]]),
    );
  });

  test("a replayed spill file counts once, even replayed twice", async () => {
    const dir = tempDir("usage-e-");
    const s = open(dir);
    const events = Array.from({ length: 20 }, () => event({ ts: "2025-04-02T10:00:00.000Z" }));
    await s.append(events.slice(0, 12));
    // a spill file holding the written events and the rest (a crash after the spill, before
    // the replay ended), copied so it is replayed twice
    const spillDir = join(dir, "spill");
    mkdirSync(spillDir, { recursive: true });
    const spill = new JsonlLog<UsageEvent>(join(spillDir, "usage-1.jsonl"));
    spill.append(events);
    spill.close();
    cpSync(join(spillDir, "usage-1.jsonl"), join(spillDir, "usage-2.jsonl"));
    const writer = new BatchingRecorder(s, { flushMs: 10, flushEvents: 100, spillDir });
    await writer.flush();
    await writer.close();
    expect(writer.stats().replayed).toBe(40);
    await expectCounted(s, "acc-1", "2025-04-02", "2025-04-02", 20);
  });

  test("kill -9 in the middle of appends: every event in the log is counted, none twice", async () => {
    const dir = tempDir("usage-e-");
    // a child process appending batches of 500 as fast as it can, killed under way
    const script = join(dir, "append.ts");
    writeFileSync(
      script,
      `import { EmbeddedUsageStore } from ${JSON.stringify(join(ROOT, "src/store/embedded/usage"))};
       const s = EmbeddedUsageStore.open(${JSON.stringify(dir)});
       for (let b = 0; ; b++) {
         const t = Date.parse("2025-05-01T00:00:00Z") + b * 60_000;
         const batch = Array.from({ length: 500 }, (_, i) => ({
           id: Bun.randomUUIDv7(), ts: new Date(t + i).toISOString(), day: "2025-05-01",
           accountId: "acc-" + (i % 7), keyId: "k" + (i % 3), tier: "pro", bucket: "svg",
           route: "/v1/svg/:slug", slug: "b" + (i % 50), variant: null, status: i % 11 ? 200 : 404,
           latencyMs: i % 40 }));
         await s.append(batch);
         if (b === 3) console.log("appending");
       }`,
    );
    const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    // the line comes right after the 4th batch's commit, and the loop goes straight on to the
    // next append: killed now, it dies among the appends that follow
    await reader.read();
    child.kill("SIGKILL");
    await child.exited;

    const s = open(dir);
    expect(s.size).toBeGreaterThanOrEqual(2000);
    expect(s.size % 500).toBe(0);
    for (let a = 0; a < 7; a++) {
      const t = await totals(s, `acc-${a}`, "2025-05-01", "2025-05-01");
      expect(t).toEqual({ log: t.log, daily: t.log, day: t.log, hour: t.log });
    }
    expect(s.db.integrityCheck()).toEqual(["ok"]);
  }, 20_000);

  test("an export page: its size and last id first, then chunks of lines from the first byte", async () => {
    const s = open(tempDir("usage-e-"));
    const events = Array.from({ length: 2500 }, (_, i) =>
      event({ ts: new Date(Date.parse("2025-06-01T00:00:00Z") + i * 1000).toISOString() }),
    );
    await s.append(events);
    const page = await s.exportStream("acc-1", {
      from: "2025-06-01",
      to: "2025-06-01",
      after: events[99]?.id ?? null,
      before: "2025-06-01T00:40:00.000Z",
      limit: 2000,
    });
    // 2,400 events before 00:40, 100 of them before the cursor: 2,000 of the 2,300 left
    expect(page.events).toBe(2000);
    expect(page.last).toBe(events[2099]?.id ?? "");
    const first = new TextDecoder().decode((await page.next()) ?? new Uint8Array());
    const lines = first.split("\n").filter(Boolean);
    expect(lines.length).toBeLessThan(2000);
    expect(JSON.parse(lines[0] as string)).toEqual(events[100]);
    let n = lines.length;
    for (let c = await page.next(); c; c = await page.next())
      n += new TextDecoder().decode(c).split("\n").filter(Boolean).length;
    expect(n).toBe(2000);
  });

  test("durability: WAL with synchronous=NORMAL; strict makes each batch's own commit durable, not the other writers'", async () => {
    const sync = (s: EmbeddedUsageStore) =>
      s.db.get<{ synchronous: number }>("PRAGMA synchronous")?.synchronous;
    const batched = open(tempDir("usage-e-"));
    const strict = open(tempDir("usage-e-"), true);
    for (const s of [batched, strict]) {
      expect(await s.append([event({ ts: "2025-06-02T00:00:00.000Z" })])).toBe(1);
      // back to NORMAL after a strict batch: the other adapters' writes keep their own mode
      expect(sync(s)).toBe(1);
      expect(s.db.get<{ journal_mode: string }>("PRAGMA journal_mode")?.journal_mode).toBe("wal");
    }
  });
});

describe("import of an older DATA_DIR's JSONL usage log", () => {
  const line = (e: UsageEvent) => `${JSON.stringify(e)}\n`;
  const a = event({ ts: "2025-01-31T23:59:59.999Z", miss: ["slug:gone"] });
  const b = event({ ts: "2025-02-01T00:00:00.000Z", status: 404 });
  const c = event({ ts: "2025-02-01T10:00:00.000Z" });

  /** a DATA_DIR as the JSONL store left it: two day files (a duplicate line, a torn last line, a
   * line that is no event), the archive of a pruned day */
  function legacy(): string {
    const dir = tempDir("usage-legacy-");
    const events = join(dir, "events");
    mkdirSync(events, { recursive: true });
    writeFileSync(join(events, "2025-01-31.jsonl"), line(a));
    writeFileSync(
      join(events, "2025-02-01.jsonl"),
      `${line(b)}${line(c)}${line(b)}{"id":"x","bucket":"nope"}\n${line(c).slice(0, 40)}`,
    );
    const archived = { accountId: "acc-1", day: "2024-12-01", bucket: "svg" };
    writeFileSync(
      join(events, "daily-archive.jsonl"),
      `${JSON.stringify({ ...archived, requests: 7, errors: 1, rateLimited: 2 })}\n`,
    );
    return dir;
  }

  test("every event once, projected; the archive's rows kept; events/ moved to events.imported/", async () => {
    const dir = legacy();
    const logs = captureLogs();
    let s: EmbeddedUsageStore;
    try {
      s = open(dir);
    } finally {
      logs.restore();
    }
    expect(storedEvents(s.db)).toEqual([a, b, c]);
    expect(existsSync(join(dir, "events"))).toBe(false);
    expect(existsSync(join(dir, "events.imported", "2025-02-01.jsonl"))).toBe(true);
    expect(await s.daily("acc-1", "2024-12-01", "2025-02-01")).toEqual([
      {
        accountId: "acc-1",
        day: "2024-12-01",
        bucket: "svg",
        requests: 7,
        errors: 1,
        rateLimited: 2,
      },
      {
        accountId: "acc-1",
        day: "2025-01-31",
        bucket: "svg",
        requests: 1,
        errors: 0,
        rateLimited: 0,
      },
      {
        accountId: "acc-1",
        day: "2025-02-01",
        bucket: "svg",
        requests: 2,
        errors: 1,
        rateLimited: 0,
      },
    ]);
    await expectCounted(s, "acc-1", "2025-01-31", "2025-02-01", 3);
    expect(await s.misses("acc-1", "2025-01-01", "2025-02-28")).toEqual(
      new Map([["slug:gone", 1]]),
    );
    const msgs = logs.lines.map((l) => l.msg);
    expect(msgs.filter((m) => m === "imported usage events")).toHaveLength(2);
    expect(msgs.filter((m) => m === "skipped an unreadable usage event line")).toHaveLength(2);
    // a restart imports nothing again
    await s.close();
    const again = open(dir);
    expect(again.size).toBe(3);
  });

  test("idempotent: an import killed under way, then run to its end and run again, stores and counts each event once", async () => {
    const dir = legacy();
    // a big day file, so the kill lands inside the import
    const big = Array.from({ length: 60_000 }, (_, i) =>
      event({
        ts: new Date(Date.parse("2025-03-15T00:00:00Z") + i * 1000).toISOString(),
        accountId: `acc-${i % 5}`,
        slug: `brand-${i % 20}`,
      }),
    );
    writeFileSync(join(dir, "events", "2025-03-15.jsonl"), big.map(line).join(""));
    const copy = join(dir, "events-copy");
    cpSync(join(dir, "events"), copy, { recursive: true });
    const script = join(dir, "open.ts");
    writeFileSync(
      script,
      `import { EmbeddedUsageStore } from ${JSON.stringify(join(ROOT, "src/store/embedded/usage"))};
       EmbeddedUsageStore.open(${JSON.stringify(dir)});`,
    );
    const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "pipe" });
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    // the first file's line is out: the big file is under way
    await reader.read();
    child.kill("SIGKILL");
    await child.exited;

    const logs = captureLogs();
    try {
      // the restart imports what is left; then the folder comes back (a crash before the
      // rename) and a third start finds every event there already
      await open(dir).close();
      cpSync(copy, join(dir, "events"), { recursive: true });
    } finally {
      logs.restore();
    }
    const s = open(dir);
    expect(s.size).toBe(big.length + 3);
    expect(existsSync(join(dir, "events.imported.2"))).toBe(true);
    expect((await s.daily("acc-1", "2024-12-01", "2024-12-01"))[0]?.requests).toBe(7);
    for (let i = 0; i < 5; i++) {
      const t = await totals(s, `acc-${i}`, "2025-03-15", "2025-03-15");
      expect(t).toEqual({ log: 12_000, daily: 12_000, day: 12_000, hour: 12_000 });
    }
    rmSync(copy, { recursive: true });
  }, 30_000);
});
