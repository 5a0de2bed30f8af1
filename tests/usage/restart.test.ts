import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { UsageEvent } from "../../src/usage/event";
import { eventsOf } from "../../src/usage/log/batch";
import { readSpill, spillFiles } from "../../src/usage/log/spill";
import { SERVICE_CMD, tempDir } from "../support/app";
import { adminKey, startService } from "../support/service";
import { storedEvents, until } from "./util";

/**
 * Kill-and-restart tests on the embedded default: the real entry point (`bun src/main.ts`) in a
 * child process over a temp DATA_DIR.
 */
const ROOT = join(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The entry point over `dataDir` (LOG_LEVEL warn: the unreadable-line warning is read back). */
async function start(dataDir: string, env: Record<string, string> = {}) {
  const svc = await startService({ dataDir, env: { LOG_LEVEL: "warn", ...env } });
  return { ...svc, stderr: () => new Response(svc.proc.stderr as ReadableStream).text() };
}

/** Metered requests, some in parallel; returns the statuses the client was answered with. */
async function traffic(base: string, apiKey: string, n: number): Promise<number[]> {
  const slugs = ["github", "gitlab", "npm", "no-such-brand-xyz"];
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 8) {
    const batch = Array.from({ length: Math.min(8, n - i) }, (_, j) =>
      fetch(`${base}/v1/catalog/${slugs[(i + j) % slugs.length]}`, {
        headers: { "x-api-key": apiKey },
      }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

/** The account's events in the log of the database under `dataDir` (the process has exited). */
const eventsOnDisk = (dataDir: string, accountId: string): UsageEvent[] =>
  storedEvents(dataDir).filter((e) => e.accountId === accountId);

/**
 * The account's events a restart keeps: those in the log and those spilled to DATA_DIR/spill
 * (a writer behind the traffic spills; the restart replays the files), each id once.
 */
function eventsKept(dataDir: string, accountId: string): UsageEvent[] {
  const spill = join(dataDir, "spill");
  const spilled = spillFiles(spill).flatMap((f) =>
    readSpill(join(spill, f)).flatMap((b) => eventsOf(b)),
  );
  const byId = new Map<string, UsageEvent>();
  for (const e of [...eventsOnDisk(dataDir, accountId), ...spilled])
    if (e.accountId === accountId) byId.set(e.id, e);
  return [...byId.values()];
}

const tally = (xs: number[]) => {
  const m: Record<string, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
};

describe("usage log across process restarts (embedded store)", () => {
  test("SIGTERM: stops, flushes, exits 0; every acknowledged event is on disk", async () => {
    const dataDir = tempDir("usage-p-");
    dirs.push(dataDir);
    // a flush interval far beyond the test: only the shutdown flush can write these events
    const svc = await start(dataDir, { USAGE_FLUSH_MS: "60000", USAGE_FLUSH_EVENTS: "100000" });
    const { accountId, apiKey } = await adminKey(svc.base, "free");
    const statuses = await traffic(svc.base, apiKey, 60);
    expect(tally(statuses)).toEqual({ 200: 45, 404: 15 });
    expect(eventsOnDisk(dataDir, accountId)).toHaveLength(0);

    svc.proc.kill("SIGTERM");
    expect(await svc.proc.exited).toBe(0);
    const events = eventsOnDisk(dataDir, accountId);
    expect(events).toHaveLength(60);
    expect(tally(events.map((e) => e.status))).toEqual(tally(statuses));
    expect(events.every((e) => e.bucket === "catalog" && e.route === "/v1/catalog/:slug")).toBe(
      true,
    );
    const spill = join(dataDir, "spill");
    expect(existsSync(spill) ? spillFiles(spill) : []).toEqual([]);
  }, 30_000);

  test("kill -9 under load: after the restart the analytics, usage_daily and the log agree", async () => {
    const dataDir = tempDir("usage-p-");
    dirs.push(dataDir);
    // small batches written often: the kill lands among many commits, likely inside one
    const first = await start(dataDir, { USAGE_FLUSH_MS: "5", USAGE_FLUSH_EVENTS: "4" });
    const { accountId, apiKey } = await adminKey(first.base, "pro");
    await traffic(first.base, apiKey, 40);
    await until(() => eventsOnDisk(dataDir, accountId).length === 40, 10_000, "the flush");
    // traffic on 8 connections until the process is gone
    let running = true;
    const load = Array.from({ length: 8 }, async () => {
      while (running) await traffic(first.base, apiKey, 1).catch(() => (running = false));
    });
    // killed once the load has written more batches (each of at most 4 events)
    await until(
      () => eventsOnDisk(dataDir, accountId).length >= 80,
      10_000,
      "40 more events written under load",
      20,
    );
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    running = false;
    await Promise.all(load);

    const day = new Date().toISOString().slice(0, 10);
    const logged = eventsOnDisk(dataDir, accountId);
    expect(logged.length).toBeGreaterThan(40);
    expect(new Set(logged.map((e) => e.id)).size).toBe(logged.length);
    const onDisk = eventsKept(dataDir, accountId);
    const second = await start(dataDir);
    try {
      await until(
        () => eventsOnDisk(dataDir, accountId).length === onDisk.length,
        10_000,
        "the spill replay",
      );
      const expected = {
        requests: onDisk.length,
        errors: onDisk.filter((e) => e.status >= 400 && e.status !== 429).length,
        rateLimited: onDisk.filter((e) => e.status === 429).length,
      };
      const get = async <T>(path: string) =>
        (await (
          await fetch(`${second.base}${path}`, { headers: { "x-api-key": apiKey } })
        ).json()) as T;
      // usage_daily
      const h = await get<{ totals: { catalog: typeof expected } }>(
        `/v1/analytics/usage?from=${day}&to=${day}&bucket=catalog`,
      );
      expect(h.totals.catalog).toEqual(expected);
      // the analytics cells, by day and by hour
      for (const g of ["day", "hour"]) {
        const s = await get<{ totals: { requests: number; errors: number; rateLimited: number } }>(
          `/v1/analytics/usage?from=${day}&to=${day}&granularity=${g}`,
        );
        expect(s.totals).toMatchObject(expected);
      }
      const u = await get<{ endpoints: { catalog: { used: number } } }>("/v1/usage");
      // the outcome rule: everything counts but 429 refusals and server errors
      expect(u.endpoints.catalog.used).toBe(
        onDisk.filter((e) => e.status !== 429 && e.status < 500).length,
      );
    } finally {
      second.proc.kill("SIGTERM");
      expect(await second.proc.exited).toBe(0);
    }
    // the operator command recomputes the projections from the same log
    const cli = Bun.spawnSync([process.execPath, "scripts/admin.ts", "projections", "rebuild"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "error" },
    });
    expect(cli.exitCode).toBe(0);
    expect(cli.stdout.toString()).toContain(`projections rebuilt from ${onDisk.length} events`);
  }, 40_000);

  test("USAGE_DURABILITY=strict: kill -9 right after N acknowledged requests loses none (batched, the same run, loses them)", async () => {
    // a flush window far beyond the test: batched writes nothing before the kill; strict
    // writes each group at once and answers after its fdatasync
    const env = { USAGE_FLUSH_MS: "60000", USAGE_FLUSH_EVENTS: "100000" };
    const lost: Record<string, number> = {};
    for (const durability of ["strict", "batched"]) {
      const dataDir = tempDir("usage-p-");
      dirs.push(dataDir);
      const svc = await start(dataDir, { ...env, USAGE_DURABILITY: durability });
      const { accountId, apiKey } = await adminKey(svc.base, "pro");
      const statuses = await traffic(svc.base, apiKey, 120);
      svc.proc.kill("SIGKILL");
      await svc.proc.exited;
      const events = eventsOnDisk(dataDir, accountId);
      lost[durability] = statuses.length - events.length;
      if (durability !== "strict") continue;
      expect(tally(events.map((e) => e.status))).toEqual(tally(statuses));
      // and the analytics count every answered request, from the same transactions
      const again = await start(dataDir);
      try {
        const day = new Date().toISOString().slice(0, 10);
        const r = await fetch(
          `${again.base}/v1/analytics/usage?from=${day}&to=${day}&granularity=hour`,
          {
            headers: { "x-api-key": apiKey },
          },
        );
        const { totals } = (await r.json()) as { totals: { requests: number; errors: number } };
        expect(totals).toMatchObject({
          requests: statuses.length,
          errors: statuses.filter((s) => s >= 400).length,
        });
      } finally {
        again.proc.kill("SIGTERM");
        await again.proc.exited;
      }
    }
    expect(lost).toEqual({ strict: 0, batched: 120 });
  }, 60_000);

  test("one service per DATA_DIR: a second process is refused with the first one's pid; a kill -9 frees it", async () => {
    const dataDir = tempDir("usage-lock-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    try {
      const second = Bun.spawn(SERVICE_CMD, {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          PORT: "0",
          HOST: "127.0.0.1",
          LOG_LEVEL: "error",
        },
        stdout: "ignore",
        stderr: "pipe",
      });
      expect(await second.exited).toBe(1);
      const err = await new Response(second.stderr as ReadableStream).text();
      expect(err).toContain("another service process uses DATA_DIR");
      expect(err).toContain(`pid ${first.proc.pid}`);
    } finally {
      first.proc.kill("SIGKILL");
      await first.proc.exited;
    }
    // the lock went with the process: a new one starts on the same DATA_DIR
    const third = await start(dataDir);
    third.proc.kill("SIGTERM");
    expect(await third.proc.exited).toBe(0);
  });
});
