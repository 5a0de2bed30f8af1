import { describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLogs } from "../../../src/platform/log";
import type { UsageEvent } from "../../../src/usage/event";
import { type Batch, batchesOfEvents, eventsOf } from "../../../src/usage/log/batch";
import type { EmbeddedUsageLog } from "../../../src/usage/log/embedded";
import { LogRecorder } from "../../../src/usage/log/recorder";
import { SpillFile } from "../../../src/usage/log/spill";
import { tempDir } from "../../support/app";
import { accountEvents, batchesOf, type Input, logOpener, storedEvents } from "../util";

const ROOT = join(import.meta.dir, "../../..");
const openLog = logOpener();
/** the logs' clock, and hourly cells kept for every day of the tests */
const NOW = Date.parse("2025-06-30T12:00:00Z");
const open = (dir: string, durable?: boolean) =>
  openLog(dir, { durable, now: () => NOW, hourlyDays: 36500 });
const at = (ts: string, over: Partial<Input> = {}): Partial<Input> => ({
  at: Date.parse(ts),
  ...over,
});
const copy = (b: Batch): Batch => ({ ...b, strings: [...b.strings] });

/** Requests counted by the history (usage_daily), the day.bs and hour.all cells, and events in the log. */
async function totals(s: EmbeddedUsageLog, accountId: string, from: string, to: string) {
  const sum = (rows: { cells: { n: number }[] }[]) =>
    rows.flatMap((r) => r.cells).reduce((n, c) => n + c.n, 0);
  return {
    log: storedEvents(s.db).filter((e) => e.accountId === accountId && e.day >= from && e.day <= to)
      .length,
    daily: (await s.daily(accountId, from, to)).reduce((n, r) => n + r.requests, 0),
    day: sum(await s.cells(accountId, "day", "bs", from, to)),
    hour: sum(await s.cells(accountId, "hour", "all", `${from}T00`, `${to}T23`)),
  };
}

/** `log` events in the log, counted as `requests` by usage_daily and the day and hour cells. */
async function expectCounted(
  s: EmbeddedUsageLog,
  accountId: string,
  from: string,
  to: string,
  log: number,
  requests = log,
) {
  const t = await totals(s, accountId, from, to);
  expect(t).toEqual({ log, daily: requests, day: requests, hour: requests });
}

/** The whole export of an account's range (pages of `limit`). */
async function exported(
  s: EmbeddedUsageLog,
  accountId: string,
  from: string,
  to: string,
  limit = 10,
) {
  const out: UsageEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await s.exportStream(accountId, { from, to, after, before: NOW, limit });
    for (let c = await page.next(); c; c = await page.next())
      for (const l of new TextDecoder().decode(c).split("\n")) if (l) out.push(JSON.parse(l));
    if (page.events < limit || !page.last) return out;
    after = page.last;
  }
}

describe("embedded usage log (SQLite)", () => {
  test("a restart sees the same events, projections and export; replays stay idempotent", async () => {
    const dir = tempDir("usage-e-");
    const first = open(dir);
    const batches = batchesOf([
      at("2025-03-01T08:00:00.000Z", { status: 200, miss: ["slug:nope"] }),
      at("2025-03-01T09:00:00.000Z", { status: 429, count: 3 }),
      at("2025-03-02T09:00:00.000Z", { bucket: "png", status: 500 }),
    ]);
    await first.append(batches);
    const before = {
      daily: await first.daily("acc-1", "2025-03-01", "2025-03-31"),
      cells: await first.cells("acc-1", "hour", "all", "2025-03-01T00", "2025-03-02T23"),
      misses: await first.misses(null, "2025-03-01", "2025-03-31"),
      page: await exported(first, "acc-1", "2025-03-01", "2025-03-31"),
    };
    await first.close();

    const second = open(dir);
    expect(second.size).toBe(3);
    expect(await second.daily("acc-1", "2025-03-01", "2025-03-31")).toEqual(before.daily);
    expect(await second.cells("acc-1", "hour", "all", "2025-03-01T00", "2025-03-02T23")).toEqual(
      before.cells,
    );
    expect(await second.misses(null, "2025-03-01", "2025-03-31")).toEqual(before.misses);
    expect(before.page).toEqual(batches.flatMap((b) => eventsOf(b)));
    expect(await exported(second, "acc-1", "2025-03-01", "2025-03-31", 2)).toEqual(before.page);
    expect(await second.append(batches.map(copy))).toBe(0);
    expect(second.size).toBe(3);
    await expectCounted(second, "acc-1", "2025-03-01", "2025-03-02", 3, 5);
  });

  test("any text round-trips: slugs, variants and misses as they were recorded", async () => {
    const s = open(tempDir("usage-e-"));
    const odd = 'x"},{"id":\n\\ bücher\u0001🙂';
    await s.append(
      batchesOf([
        at("2025-03-05T10:00:00.000Z", { slug: odd, variant: odd, miss: [`slug:${odd}`] }),
      ]),
    );
    const [e] = await exported(s, "acc-1", "2025-03-05", "2025-03-05");
    expect(e).toMatchObject({ slug: odd, variant: odd, miss: [`slug:${odd}`] });
    expect(await s.misses("acc-1", "2025-03-05", "2025-03-05")).toEqual(
      new Map([[`slug:${odd}`, 1]]),
    );
  });

  test("a retried batch counts once: daily, cells and misses, also sent with new batches", async () => {
    const s = open(tempDir("usage-e-"));
    const batches = batchesOf(
      Array.from({ length: 50 }, (_, i) =>
        at(`2025-04-01T0${i % 10}:00:00.000Z`, {
          status: i % 7 === 0 ? 404 : 200,
          miss: ["domain:a.test"],
        }),
      ),
    );
    expect(await s.append(batches)).toBe(50);
    // the same batches again (the first answer lost), then with a new one among them
    expect(await s.append(batches.map(copy))).toBe(0);
    const more = batchesOf([at("2025-04-01T11:00:00.000Z")]);
    expect(await s.append([...more, ...batches.map(copy)])).toBe(1);
    await expectCounted(s, "acc-1", "2025-04-01", "2025-04-01", 51);
    expect(await s.misses("acc-1", "2025-04-01", "2025-04-01")).toEqual(
      new Map([["domain:a.test", 50]]),
    );
  });

  test("a replayed spill file counts once, even replayed twice; an earlier version's JSONL spill file too", async () => {
    const dir = tempDir("usage-e-");
    const s = open(dir);
    const batches = batchesOf(
      Array.from({ length: 20 }, (_, i) =>
        at("2025-04-02T10:00:00.000Z", { accountId: `acc-${i % 4}` }),
      ),
    );
    await s.append(batches.slice(0, 2));
    // a spill file holding the written batches and the rest (a crash after the spill, before
    // the replay ended), copied so it is replayed twice
    const spillDir = join(dir, "spill");
    mkdirSync(spillDir, { recursive: true });
    const spill = new SpillFile(join(spillDir, "usage-1.spill"));
    spill.append(batches);
    spill.close();
    cpSync(join(spillDir, "usage-1.spill"), join(spillDir, "usage-2.spill"));
    // and events of the per-event log, spilled by an earlier version: one of them it had stored
    // as well (moved into the log with its id), the other not
    const old = [
      "019a0000-0000-7000-8000-000000000001",
      "019a0000-0000-7000-8000-000000000002",
    ].map((id, i) => ({
      id,
      ts: `2025-04-02T11:00:0${i}.000Z`,
      day: "2025-04-02",
      accountId: "acc-9",
      keyId: "k",
      tier: "pro",
      bucket: "svg",
      route: "/v1/svg/:slug",
      slug: "x",
      variant: null,
      status: 200,
      latencyMs: 1,
    }));
    await s.append(batchesOfEvents(old.slice(0, 1) as UsageEvent[]));
    writeFileSync(
      join(spillDir, "usage-3.jsonl"),
      `${old.map((e) => JSON.stringify(e)).join("\n")}\n`,
    );
    const writer = new LogRecorder(s, { flushMs: 10, flushEvents: 100, spillDir });
    await writer.flush();
    for (let i = 0; i < 3; i++) await writer.flush();
    await writer.close();
    expect(writer.stats().replayed).toBe(41);
    for (let a = 0; a < 4; a++) await expectCounted(s, `acc-${a}`, "2025-04-02", "2025-04-02", 5);
    expect(await accountEvents(s, "acc-9", "2025-04-02")).toEqual(old as UsageEvent[]);
    await expectCounted(s, "acc-9", "2025-04-02", "2025-04-02", 2);
  });

  test("kill -9 in the middle of appends: every event in the log is counted, none twice", async () => {
    const dir = tempDir("usage-e-");
    // a child process appending batches as fast as it can, killed under way
    const script = join(dir, "append.ts");
    writeFileSync(
      script,
      `import { EmbeddedUsageLog } from ${JSON.stringify(join(ROOT, "src/usage/log/embedded"))};
       import { batchesOf } from ${JSON.stringify(join(ROOT, "tests/usage/util"))};
       const s = EmbeddedUsageLog.open(${JSON.stringify(dir)}, { hourlyDays: 36500 });
       for (let b = 0; ; b++) {
         const t = Date.parse("2025-05-01T00:00:00Z") + b * 60_000;
         await s.append(batchesOf(Array.from({ length: 500 }, (_, i) => ({
           at: t + i, accountId: "acc-" + (i % 7), keyId: "k" + (i % 3), tier: "pro",
           slug: "b" + (i % 50), status: i % 11 ? 200 : 404, latencyMs: i % 40 }))));
         if (b === 3) console.log("appending");
       }`,
    );
    const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    // the line comes right after the 4th append's commit, and the loop goes straight on to the
    // next append: killed now, it dies among the appends that follow
    await reader.read();
    child.kill("SIGKILL");
    await child.exited;

    const s = openLog(dir, { hourlyDays: 36500 });
    expect(s.size).toBeGreaterThanOrEqual(2000);
    expect(s.size % 500).toBe(0);
    for (let a = 0; a < 7; a++) {
      const t = await totals(s, `acc-${a}`, "2025-05-01", "2025-05-01");
      expect(t).toEqual({ log: t.log, daily: t.log, day: t.log, hour: t.log });
    }
    expect(s.db.integrityCheck()).toEqual(["ok"]);
  }, 20_000);

  test("an export page: its size and last id first, then chunks of lines; it stops before an unsettled batch", async () => {
    const s = open(tempDir("usage-e-"));
    const t0 = Date.parse("2025-06-01T00:00:00Z");
    // 50 batches of 50 events, a batch per minute
    const batches: Batch[] = [];
    for (let m = 0; m < 50; m++)
      batches.push(
        ...batchesOf(Array.from({ length: 50 }, (_, i) => ({ at: t0 + m * 60_000 + i * 1000 }))),
      );
    await s.append(batches);
    const all = batches.flatMap((b) => eventsOf(b));
    const page = await s.exportStream("acc-1", {
      from: "2025-06-01",
      to: "2025-06-01",
      after: all[99]?.id ?? null,
      // minute 40's batch has events from 40:00 to 40:49: it is not settled, nor any after it
      before: t0 + 40 * 60_000 + 10_000,
      limit: 3000,
    });
    // 40 whole batches before, 100 of their events before the cursor
    expect(page.events).toBe(1900);
    expect(page.last).toBe(all[1999]?.id ?? "");
    const first = new TextDecoder().decode((await page.next()) ?? new Uint8Array());
    const lines = first.split("\n").filter(Boolean);
    expect(lines.length).toBeLessThan(1900);
    expect(JSON.parse(lines[0] as string)).toEqual(all[100]);
    let n = lines.length;
    for (let c = await page.next(); c; c = await page.next())
      n += new TextDecoder().decode(c).split("\n").filter(Boolean).length;
    expect(n).toBe(1900);
  });

  test("durability: WAL with synchronous=NORMAL; strict makes each append's own commit durable, not the other writers'", async () => {
    const sync = (s: EmbeddedUsageLog) =>
      s.db.get<{ synchronous: number }>("PRAGMA synchronous")?.synchronous;
    const batched = openLog(tempDir("usage-e-"), { writer: "inline" });
    const strict = openLog(tempDir("usage-e-"), { writer: "inline", durable: true });
    for (const s of [batched, strict]) {
      expect(await s.append(batchesOf([at("2025-06-02T00:00:00.000Z")]))).toBe(1);
      // back to NORMAL after a strict transaction: the other adapters' writes keep their own mode
      expect(sync(s)).toBe(1);
      expect(s.db.get<{ journal_mode: string }>("PRAGMA journal_mode")?.journal_mode).toBe("wal");
    }
  });
});

describe("import of an older DATA_DIR's JSONL usage log", () => {
  const line = (e: UsageEvent) => `${JSON.stringify(e)}\n`;
  const ev = (n: number, over: Partial<UsageEvent>): UsageEvent => ({
    id: `019a0000-0000-7000-8000-${String(n).padStart(12, "0")}`,
    ts: "2025-01-01T00:00:00.000Z",
    day: "2025-01-01",
    accountId: "acc-1",
    keyId: "key-1",
    tier: "free",
    bucket: "svg",
    route: "/v1/svg/:slug",
    slug: "brand",
    variant: null,
    status: 200,
    latencyMs: 1.5,
    ...over,
  });
  const a = ev(1, { ts: "2025-01-31T23:59:59.999Z", day: "2025-01-31", miss: ["slug:gone"] });
  const b = ev(2, { ts: "2025-02-01T00:00:00.000Z", day: "2025-02-01", status: 404 });
  const c = ev(3, { ts: "2025-02-01T10:00:00.000Z", day: "2025-02-01" });

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

  test("every event once, with its id, counted; the archive's rows kept; events/ moved to events.imported/", async () => {
    const dir = legacy();
    const logs = captureLogs();
    let s: EmbeddedUsageLog;
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
    const big = Array.from({ length: 60_000 }, (_, i) => {
      const ts = new Date(Date.parse("2025-03-15T00:00:00Z") + i * 1000).toISOString();
      return ev(1000 + i, {
        ts,
        day: "2025-03-15",
        accountId: `acc-${i % 5}`,
        slug: `brand-${i % 20}`,
      });
    });
    writeFileSync(join(dir, "events", "2025-03-15.jsonl"), big.map(line).join(""));
    const saved = join(dir, "events-copy");
    cpSync(join(dir, "events"), saved, { recursive: true });
    const script = join(dir, "open.ts");
    writeFileSync(
      script,
      `import { EmbeddedUsageLog } from ${JSON.stringify(join(ROOT, "src/usage/log/embedded"))};
       EmbeddedUsageLog.open(${JSON.stringify(dir)}, { hourlyDays: 36500 });`,
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
      await openLog(dir, { hourlyDays: 36500 }).close();
      cpSync(saved, join(dir, "events"), { recursive: true });
    } finally {
      logs.restore();
    }
    const s = openLog(dir, { hourlyDays: 36500 });
    expect(s.size).toBe(big.length + 3);
    expect(existsSync(join(dir, "events.imported.2"))).toBe(true);
    expect((await s.daily("acc-1", "2024-12-01", "2024-12-01"))[0]?.requests).toBe(7);
    for (let i = 0; i < 5; i++) {
      const t = await totals(s, `acc-${i}`, "2025-03-15", "2025-03-15");
      expect(t).toEqual({ log: 12_000, daily: 12_000, day: 12_000, hour: 12_000 });
    }
    rmSync(saved, { recursive: true });
  }, 30_000);
});

export { batchesOfEvents };
