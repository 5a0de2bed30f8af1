import { describe, expect, spyOn, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import type { EmbeddedUsageStore } from "../../src/store/embedded/usage";
import type { UsageEvent } from "../../src/usage/port";
import { tempDir } from "../support/temp";
import { event, storeOpener, until } from "./util";

const openStore = storeOpener();
const open = (opts: Parameters<typeof EmbeddedUsageStore.open>[1] = {}) =>
  openStore(tempDir("usage-thread-"), opts);

const DAY = "2025-06-01";
const batch = (n: number): UsageEvent[] =>
  Array.from({ length: n }, (_, i) =>
    event({ ts: new Date(Date.parse(`${DAY}T00:00:00Z`) + i).toISOString() }),
  );

/** requests counted in usage_daily for DAY */
const counted = async (s: EmbeddedUsageStore) =>
  (await s.daily("acc-1", DAY, DAY)).reduce((n, r) => n + r.requests, 0);

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
    await threaded.append(batch(10), { fresh: true }); // the thread started
    const big = batch(50_000);
    const turns = await turnsDuring(() => threaded.append(big, { fresh: true }));
    expect(threaded.size).toBe(50_010);
    expect(await counted(threaded)).toBe(50_010);

    const inline = open({ writer: "inline" });
    const inlineTurns = await turnsDuring(() => inline.append(batch(50_000), { fresh: true }));
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
      expect(await s.append(acked, { fresh: true })).toBe(1_000);
      const more = batch(20_000);
      // killed once its last part is posted to the thread (the serializing done), while the
      // thread stores the 20,000 events in one transaction
      const posted = spyOn(Worker.prototype, "postMessage");
      let pending: Promise<number>;
      try {
        pending = s.append(more, { fresh: true });
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
      expect(s.size).toBe(21_000);
      expect(await counted(s)).toBe(21_000);
      // the same batch again (a writer's retry): nothing new, nothing counted twice
      expect(await s.append(more)).toBe(0);
      expect(await counted(s)).toBe(21_000);
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
      expect(await s.append(batch(5), { fresh: true })).toBe(5);
      expect(await s.append(batch(5), { fresh: true })).toBe(5);
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
    const s = open();
    await s.append(batch(1), { fresh: true });
    // another connection holds the write lock past the thread's busy timeout
    s.db.exec("PRAGMA busy_timeout = 0");
    s.db.db.exec("BEGIN IMMEDIATE");
    try {
      const err = await s.append(batch(1), { fresh: true }).catch((e) => e);
      expect((err as NodeJS.ErrnoException).code).toBe("EBUSY");
    } finally {
      s.db.db.exec("ROLLBACK");
    }
  }, 20_000);
});
