import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLogs } from "../../../src/platform/log";
import { DB_FILE } from "../../../src/store/embedded/db";
import { eventsOf } from "../../../src/usage/log/batch";
import { LogRecorder } from "../../../src/usage/log/recorder";
import { readSpill, spillFiles } from "../../../src/usage/log/spill";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { smallCatalogFile } from "../../support/catalog";
import { adminKey, startService } from "../../support/service";
import { describeIf, NO_TMPFS } from "../../support/skip";
import { accountEvents, storedEvents, until } from "../../usage/util";

/**
 * A full disk under DATA_DIR, for real: a 2 MiB tmpfs mounted for the test (needs root; skipped
 * otherwise), filled with a ballast file. Account and key writes answer 503
 * storage_unavailable and leave no partial file; usage events are held in memory, readiness
 * says so, USAGE_ON_STORE_FULL=refuse turns metered requests away at the bound, and once space
 * is freed every served request's event is written.
 */

const mountPoint = tempDir("full-disk-");
const mounted =
  process.getuid?.() === 0 &&
  Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint]).exitCode === 0;
if (!mounted) console.warn("skipping full-disk tests: mounting a tmpfs needs root");

const dataDir = join(mountPoint, "data");
const ballast = join(mountPoint, "ballast");

/** Fill the file system: one ballast file grown until the disk refuses more. */
function fillDisk(ballast: string) {
  const chunk = Buffer.alloc(64 * 1024);
  let size = 0;
  for (;;) {
    try {
      writeFileSync(ballast, chunk, { flag: size === 0 ? "w" : "a" });
      size += chunk.length;
    } catch {
      break;
    }
  }
  // what is left (less than a chunk) goes too
  for (;;) {
    try {
      writeFileSync(ballast, Buffer.alloc(512), { flag: "a" });
    } catch {
      return;
    }
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String);
}

describeIf(mounted, NO_TMPFS)("a full disk under DATA_DIR", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    // the small catalog: the store's record of the built brands (the audit's) fits the 2 MiB
    t = await makeApp(
      { DATA_DIR: dataDir, USAGE_ON_STORE_FULL: "refuse", CATALOG_FILE: smallCatalogFile() },
      {
        // the real recorder on the same store, with small bounds so the test reaches them
        customize: async (deps) => {
          await deps.usage.close();
          deps.usage = new LogRecorder(deps.store.usage, {
            flushMs: 20,
            flushEvents: 10,
            spillDir: join(dataDir, "spill"),
            maxBuffered: 20,
            maxHeld: 40,
            onFull: "refuse",
            backoffMinMs: 20,
            backoffMaxMs: 100,
          });
        },
      },
    );
    key = await t.key("pro");
    // the e-mail index secret exists before the disk fills (registration needs it)
    expect((await t.req("/readyz")).status).toBe(200);
  });
  afterAll(async () => {
    rmSync(ballast, { force: true });
    await t?.close();
    Bun.spawnSync(["umount", mountPoint]);
  });

  test("account and key writes: 503 storage_unavailable, no partial file; then metered requests up to the bound, readiness 503, refusals; all written once space is back", async () => {
    const logs = captureLogs();
    try {
      const before = filesUnder(dataDir);
      const sizes = Object.fromEntries(
        before.map((f) => [f, statSync(join(dataDir, f)).size] as const),
      );
      const accounts = await t.deps.store.accounts.listAccounts({ limit: Infinity });
      fillDisk(ballast);

      const admin = await t.req("/admin/keys", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ tier: "free", email: "full@example.com" }),
      });
      expect(admin.status).toBe(503);
      expect(await admin.json()).toEqual({
        error: "storage_unavailable",
        message: expect.stringContaining("Retry later"),
      });
      expect(Number(admin.headers.get("retry-after"))).toBeGreaterThan(0);
      const register = await t.req("/auth/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "full@example.com", password: "correct horse battery" }),
      });
      expect(register.status).toBe(503);
      expect(((await register.json()) as { error: string }).error).toBe("storage_unavailable");
      expect(logs.lines).toContainEqual(
        expect.objectContaining({
          level: "error",
          msg: "storage unavailable: write refused, answered 503",
          code: "ENOSPC",
        }),
      );
      // nothing half-written: no temp file, no new file with content, no file grown (but the
      // database's WAL: a refused commit may leave frames past the last committed one, which
      // are never read and which the next write overwrites), nothing committed, no damage
      const after = filesUnder(dataDir);
      expect(after.filter((f) => f.endsWith(".tmp"))).toEqual([]);
      expect(await t.deps.store.accounts.listAccounts({ limit: Infinity })).toEqual(accounts);
      expect(t.deps.store.db?.integrityCheck()).toEqual(["ok"]);
      for (const f of after) {
        const size = statSync(join(dataDir, f)).size;
        if (statSync(join(dataDir, f)).isDirectory() || f.endsWith("-wal")) continue;
        expect({ f, size }).toEqual({ f, size: sizes[f] ?? 0 });
      }

      // metered requests: served while their events fit in memory (40), then refused
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) statuses.push((await t.get("/v1/catalog/github", key)).status);
      const served = statuses.filter((s) => s === 200).length;
      expect(served).toBe(40);
      expect(statuses.slice(served).every((s) => s === 503)).toBe(true);
      const refused = await t.get("/v1/catalog/github", key);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toBe("storage_unavailable");
      expect(refused.headers.get("retry-after")).toBe("5");
      // readiness: not ready, and says why
      const ready = await t.req("/readyz");
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { usage: { state: string; held: number } };
      expect(body.usage).toMatchObject({ state: "degraded", held: 40 });

      // space is back: the held events are written, readiness and metered requests recover
      rmSync(ballast);
      await until(async () => (await t.req("/readyz")).status === 200, 10_000, "ready again");
      expect((await t.get("/v1/catalog/github", key)).status).toBe(200);
      await t.deps.usage.flush();
      const account = (await t.deps.accounts.verifyKey(key))?.accountId;
      const today = new Date().toISOString().slice(0, 10);
      const events = await accountEvents(t.deps.store.usage, account as string, today);
      const written = events.filter((e) => e.status === 200).length;
      expect(written).toBe(served + 1);
      // counted once: usage_daily and the analytics cells hold every event, none twice
      const [row] = await t.deps.store.usage.daily(account as string, today, today);
      expect(row?.requests).toBe(served + 1);
      const cells = await t.deps.store.usage.cells(account as string, "day", "bs", today, today);
      const n = cells.flatMap((p) => p.cells);
      expect(n.reduce((sum, c) => sum + c.n, 0)).toBe(served + 1);
      expect(t.deps.usage.condition?.().state).toBe("ok");
    } finally {
      logs.restore();
    }
    // the log said what happened, and never that the store was back while it was full
    const msgs = logs.lines.map((l) => String(l.msg));
    expect(msgs).toContain(
      "usage events held in memory: neither the store nor the spill file takes them",
    );
    expect(msgs).toContain("usage events are written again; recorder ready");
  }, 60_000);
});

/**
 * The same full disk with the service as a real process: events held in memory when it is
 * stopped go to the space reserved for them (DATA_DIR/spill/reserve), and the next start, with
 * space back, writes every one.
 */
const bigMount = tempDir("full-disk-restart-");
const bigMounted =
  mounted &&
  Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", bigMount]).exitCode === 0;

describeIf(bigMounted, NO_TMPFS)("a full disk across a restart (real process)", () => {
  const dir = join(bigMount, "data");
  const weight = join(bigMount, "ballast");
  const procs: Bun.Subprocess[] = [];
  afterAll(async () => {
    for (const p of procs) {
      p.kill("SIGKILL");
      await p.exited;
    }
    rmSync(weight, { force: true });
    Bun.spawnSync(["umount", bigMount]);
  });

  /** ids of this account's events with status 200 in the log */
  function servedOnDisk(accountId: string): Set<string> {
    const ids = new Set<string>();
    if (!existsSync(join(dir, DB_FILE))) return ids;
    for (const e of storedEvents(dir))
      if (e.accountId === accountId && e.status === 200) ids.add(e.id);
    return ids;
  }

  const METRICS_TOKEN = "full-disk-metrics-token";
  /** the service's usage_write_failures_total (GET /metrics) */
  async function writeFailures(base: string): Promise<number> {
    const r = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const line = (await r.text())
      .split("\n")
      .find((l) => l.startsWith("usage_write_failures_total "));
    return Number(line?.split(" ")[1] ?? Number.NaN);
  }

  test("events held at shutdown are kept in the reserve and written after the restart: none dropped", async () => {
    const env = { LOG_LEVEL: "info", USAGE_FLUSH_MS: "20", METRICS_TOKEN };
    const first = await startService({ dataDir: dir, env, stdout: "pipe" });
    procs.push(first.proc);
    const { accountId, apiKey } = await adminKey(first.base, "pro");
    const get = async (base: string) => {
      const r = await fetch(`${base}/v1/catalog/github`, { headers: { "x-api-key": apiKey } });
      await r.arrayBuffer();
      return r.status;
    };
    expect(await get(first.base)).toBe(200);
    await until(() => servedOnDisk(accountId).size === 1, 10_000, "the first event written");
    expect(readdirSync(join(dir, "spill"))).toContain("reserve");

    fillDisk(weight);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push(await get(first.base));
    expect(statuses.every((s) => s === 200)).toBe(true);
    // writes and spills fail meanwhile (a few events may fit in the day file's last page):
    // the rest are held in memory once a write of them has failed
    await until(
      async () => (await writeFailures(first.base)) > 0,
      10_000,
      "a failed usage write",
      20,
    );
    const before = servedOnDisk(accountId).size;
    expect(before).toBeLessThan(31);

    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);
    const out = await Promise.all(
      [first.proc.stdout, first.proc.stderr].map((s) => new Response(s as ReadableStream).text()),
    );
    const lines = out
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const kept = lines.find(
      (l) => l.msg === "usage events kept in the spill reserve for the next start",
    );
    expect(kept).toMatchObject({ left: 0 });
    expect(Number(kept?.events)).toBeGreaterThanOrEqual(31 - before);
    expect(lines.find((l) => l.msg === "usage recorder closed")).toMatchObject({ dropped: 0 });
    // (failed spill attempts may leave empty files: replayed as nothing)
    const spilled = spillFiles(join(dir, "spill")).flatMap((f) =>
      readSpill(join(dir, "spill", f)).flatMap((b) => eventsOf(b)),
    );
    expect(spilled).toHaveLength(Number(kept?.events));

    // space is back: the next start replays the reserve's events and makes a new reserve
    rmSync(weight);
    const second = await startService({ dataDir: dir, env });
    procs.push(second.proc);
    try {
      // ready at once: the counters already count the reserve's events (seeded from the spill
      // files), which are replayed into the log in the background
      const u = (await (
        await fetch(`${second.base}/v1/usage`, { headers: { "x-api-key": apiKey } })
      ).json()) as { endpoints: { catalog: { used: number } } };
      expect(u.endpoints.catalog.used).toBe(31);
      await until(() => servedOnDisk(accountId).size === 31, 10_000, "the replay");
      // counted exactly once: usage_daily and the analytics cells
      const day = new Date().toISOString().slice(0, 10);
      const a = (await (
        await fetch(`${second.base}/v1/analytics/usage?from=${day}&to=${day}&granularity=day`, {
          headers: { "x-api-key": apiKey },
        })
      ).json()) as { totals: { requests: number } };
      expect(a.totals.requests).toBe(31);
      await until(
        () => readdirSync(join(dir, "spill")).sort().join() === "reserve",
        10_000,
        "the spill files replayed, a new reserve made",
      );
    } finally {
      second.proc.kill("SIGTERM");
      expect(await second.proc.exited).toBe(0);
    }
  }, 90_000);
});
