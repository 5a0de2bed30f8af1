import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readEventFile } from "../../src/store/embedded/usage-import";
import type { UsageEvent } from "../../src/usage/port";
import { tempDir } from "../support/app";
import { adminKey, startService } from "../support/service";
import { until } from "./util";

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

function eventsOnDisk(dataDir: string, accountId?: string): UsageEvent[] {
  const dir = join(dataDir, "events");
  if (!existsSync(dir)) return [];
  const seen = new Set<string>();
  return readdirSync(dir)
    .sort()
    .flatMap((f) => readEventFile(join(dir, f)))
    .filter((e) => (accountId ? e.accountId === accountId : true))
    .filter((e) => !seen.has(e.id) && !!seen.add(e.id));
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
    expect(existsSync(spill) ? readdirSync(spill).filter((f) => f.endsWith(".jsonl")) : []).toEqual(
      [],
    );
  }, 30_000);

  test("kill -9, torn last line: restart skips it; analytics and counters agree with the disk", async () => {
    const dataDir = tempDir("usage-p-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    const { accountId, apiKey } = await adminKey(first.base, "free");
    const statuses = await traffic(first.base, apiKey, 40);
    await until(() => eventsOnDisk(dataDir, accountId).length === 40, 10_000, "the flush");
    // more traffic right before the crash: whatever was not flushed yet is lost with the process
    await traffic(first.base, apiKey, 16);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const day = new Date().toISOString().slice(0, 10);
    const file = join(dataDir, "events", `${day}.jsonl`);
    const onDisk = eventsOnDisk(dataDir, accountId);
    appendFileSync(
      file,
      JSON.stringify(onDisk[0])
        .replace(onDisk[0]?.id ?? "", "torn")
        .slice(0, 70),
    );
    expect(statuses.length + 16).toBeGreaterThanOrEqual(onDisk.length);

    const second = await start(dataDir);
    try {
      const expected = {
        requests: onDisk.length,
        errors: onDisk.filter((e) => e.status >= 400 && e.status !== 429).length,
        rateLimited: onDisk.filter((e) => e.status === 429).length,
      };
      const h = (await (
        await fetch(`${second.base}/v1/analytics/usage?from=${day}&to=${day}&bucket=catalog`, {
          headers: { "x-api-key": apiKey },
        })
      ).json()) as { totals: { catalog: typeof expected } };
      expect(h.totals.catalog).toEqual(expected);
      const u = (await (
        await fetch(`${second.base}/v1/usage`, { headers: { "x-api-key": apiKey } })
      ).json()) as { endpoints: { catalog: { used: number } } };
      // the outcome rule: everything counts but 429 refusals and server errors
      expect(u.endpoints.catalog.used).toBe(
        onDisk.filter((e) => e.status !== 429 && e.status < 500).length,
      );

      // the operator command replays the same log
      const cli = Bun.spawnSync([process.execPath, "scripts/admin.ts", "projections", "rebuild"], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "error" },
      });
      expect(cli.exitCode).toBe(0);
      expect(cli.stdout.toString()).toContain(`usage_daily rebuilt from ${onDisk.length} events`);
    } finally {
      second.proc.kill("SIGTERM");
      expect(await second.proc.exited).toBe(0);
    }
    const warnings = (await second.stderr()).split("\n").filter((l) => l.includes("unreadable"));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(warnings[0] as string)).toMatchObject({ level: "warn", torn: true, file });
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
      if (durability === "strict")
        expect(tally(events.map((e) => e.status))).toEqual(tally(statuses));
    }
    expect(lost).toEqual({ strict: 0, batched: 120 });
  }, 60_000);
});
