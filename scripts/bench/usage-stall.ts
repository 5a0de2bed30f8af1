#!/usr/bin/env bun
/**
 * The request thread's longest stall while the embedded usage store appends a 50,000-event
 * batch: on the write thread (the default) and inline, the longest gap between the ticks of a
 * 1 ms timer on the request thread. Bar: on the write thread < 50 ms, or under a quarter of the
 * inline stall on a loaded machine (a runnable thread left unscheduled stretches both). The
 * test (tests/usage/write-thread.test.ts) checks that the loop turns during the append; this
 * measures how long it waits when it does not.
 *
 *   bun scripts/bench/usage-stall.ts [--events 50000] [--rounds 3]
 */
import { parseArgs } from "node:util";
import { type Batch, batchesOfEvents } from "../../src/usage/log/batch";
import { EmbeddedUsageLog } from "../../src/usage/log/embedded";
import { removeTempDir, tempDir } from "./servers";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "50000" },
    rounds: { type: "string", default: "3" },
  },
});
const N = Number(values.events);
const ROUNDS = Number(values.rounds);
const DAY = "2025-06-01";

/** `n` events of 40 accounts, a millisecond apart, batched (one batch per account). */
const batch = (n: number): Batch[] =>
  batchesOfEvents(
    Array.from({ length: n }, (_, i) => {
      const ts = new Date(Date.parse(`${DAY}T00:00:00Z`) + i).toISOString();
      return {
        id: "",
        ts,
        day: DAY,
        accountId: `acc-${i % 40}`,
        keyId: "0123456789abcdef",
        tier: "pro" as const,
        bucket: "svg" as const,
        route: "/v1/svg/:slug",
        slug: `brand-${i % 200}`,
        variant: null,
        status: 200,
        latencyMs: 1.5,
      };
    }),
  ).map((b) => ({ ...b, ids: null }));

/** The longest gap between the ticks of a 1 ms timer while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(worst, performance.now() - last);
}

const rows: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const stalls: Record<string, number> = {};
  for (const writer of ["worker", "inline"] as const) {
    const dir = tempDir("bench-stall-");
    const store = EmbeddedUsageLog.open(dir, { writer });
    try {
      await store.append(batch(10)); // the thread started
      const big = batch(N);
      stalls[writer] = await longestStall(() => store.append(big));
    } finally {
      await store.close();
      removeTempDir(dir);
    }
  }
  const thread = stalls.worker as number;
  const inline = stalls.inline as number;
  const met = thread < Math.max(50, inline / 4);
  rows.push(
    `round ${round}: longest stall on the write thread ${thread.toFixed(1)} ms, inline ${inline.toFixed(1)} ms (bar: < max(50, inline/4): ${met ? "MET" : "MISSED"})`,
  );
}
console.log(`usage-stall: ${N} events per append\n  ${rows.join("\n  ")}`);
