import { describe, expect, spyOn, test } from "bun:test";
import { captureLogs } from "../../../src/platform/log";
import type { Batch } from "../../../src/usage/log/batch";
import type { EmbeddedLogOptions, EmbeddedUsageLog } from "../../../src/usage/log/embedded";
import { tempDir } from "../../support/temp";
import { batchesOf, logOpener, until } from "../util";

const openLog = logOpener();
const open = (opts: EmbeddedLogOptions = {}) => openLog(tempDir("usage-thread-"), opts);

const DAY = "2025-06-01";
/** `n` events of 40 accounts, a millisecond apart */
const batch = (n: number): Batch[] =>
  batchesOf(
    Array.from({ length: n }, (_, i) => ({
      at: Date.parse(`${DAY}T00:00:00Z`) + i,
      accountId: `acc-${i % 40}`,
      slug: `b${i % 300}`,
    })),
  );
const copy = (b: Batch): Batch => ({ ...b, strings: [...b.strings] });

/** requests counted in usage_daily for DAY, over the 40 accounts */
const counted = async (s: EmbeddedUsageLog) => {
  let n = 0;
  for (let a = 0; a < 40; a++) n += await daily(s, `acc-${a}`);
  return n;
};
const daily = async (s: EmbeddedUsageLog, account: string) =>
  (await s.daily(account, DAY, DAY)).reduce((n, r) => n + r.requests, 0);

/**
 * How many times the request thread's event loop turned (a 1 ms timer ran) while `work` was
 * under way: an append that holds the thread for its whole transaction lets it turn at most
 * once or twice (before and after); one that runs on the write thread lets it turn all along.
 */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  const timer = setInterval(() => {
    turns++;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return turns;
}

describe("usage write thread", () => {
  // how long the request thread stalls, in ms, is measured by scripts/bench/usage-stall.ts
  test("a 50,000-event append leaves the request thread running; inline it holds it", async () => {
    const threaded = open();
    await threaded.append(batch(10)); // the thread started
    const big = batch(50_000);
    const turns = await turnsDuring(() => threaded.append(big));
    expect(threaded.size).toBe(50_010);
    expect(await counted(threaded)).toBe(50_010);

    const inline = open({ writer: "inline" });
    const inlineTurns = await turnsDuring(() => inline.append(batch(50_000)));
    expect(inline.size).toBe(50_000);
    // inline, the whole transaction runs between two turns of the loop
    expect(inlineTurns).toBeLessThanOrEqual(2);
    // on the thread, the loop turns while the transaction runs there
    expect(turns).toBeGreaterThan(inlineTurns + 3);
  });

  test("a thread killed mid-batch: nothing acknowledged is lost, the batch is resent and counted once", async () => {
    const logs = captureLogs();
    try {
      const s = open();
      const acked = batch(1_000);
      expect(await s.append(acked)).toBe(1_000);
      const more = batch(100_000).map((b) => ({
        ...b,
        t0: b.t0 + 1_000_000,
        at: b.at.map((x) => x + 1_000_000),
      }));
      // killed once its last part is posted to the thread (the serializing done), while the
      // thread stores the 20,000 events in one transaction
      const posted = spyOn(Worker.prototype, "postMessage");
      let pending: Promise<number>;
      try {
        pending = s.append(more);
        await until(
          () => posted.mock.calls.some(([m]) => (m as { op?: string })?.op === "append"),
          10_000,
          "the batch posted",
          1,
        );
      } finally {
        posted.mockRestore();
      }
      s.thread?.kill();
      expect(await pending).toBeGreaterThanOrEqual(0);
      expect(s.size).toBe(101_000);
      expect(await counted(s)).toBe(101_000);
      // the same batches again (a writer's retry): nothing new, nothing counted twice
      expect(await s.append(more.map(copy))).toBe(0);
      expect(await counted(s)).toBe(101_000);
      expect(s.thread?.unavailable).toBe(false);
      expect(
        logs.lines.filter((l) => l.msg === "usage write thread ended; starting a new one"),
      ).toHaveLength(1);
    } finally {
      logs.restore();
    }
  });

  test("a thread that cannot start: writes run inline, after one warn line", async () => {
    const logs = captureLogs();
    try {
      const s = open({ workerUrl: new URL("./no-such-worker.ts", import.meta.url) });
      expect(await s.append(batch(5))).toBe(5);
      expect(await s.append(batch(5))).toBe(5);
      expect(s.thread?.unavailable).toBe(true);
      expect(await counted(s)).toBe(10);
      expect(
        logs.lines.filter((l) => String(l.msg).startsWith("usage write thread unavailable")),
      ).toHaveLength(1);
    } finally {
      logs.restore();
    }
  });

  test("a storage error from the thread keeps its code (the writer's hold-and-retry reads it)", async () => {
    const s = open({ busyTimeoutMs: 50 });
    await s.append(batch(1));
    // another connection holds the write lock past the thread's busy timeout (50 ms)
    s.db.exec("PRAGMA busy_timeout = 0");
    s.db.db.exec("BEGIN IMMEDIATE");
    try {
      const err = await s.append(batch(1)).catch((e) => e);
      expect((err as NodeJS.ErrnoException).code).toBe("EBUSY");
    } finally {
      s.db.db.exec("ROLLBACK");
    }
  }, 20_000);
});
