import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLogs } from "../../../src/platform/log";
import { BatchingRecorder } from "../../../src/usage/writer";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { until } from "../../usage/util";

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
function fillDisk() {
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

describe.skipIf(!mounted)("a full disk under DATA_DIR", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp(
      { DATA_DIR: dataDir, USAGE_ON_STORE_FULL: "refuse" },
      {
        // the real recorder on the same store, with small bounds so the test reaches them
        customize: async (deps) => {
          await deps.usage.close();
          deps.usage = new BatchingRecorder(deps.store.usage, {
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
      fillDisk();

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
      // nothing half-written: no temp file, no new file with content, no file grown
      const after = filesUnder(dataDir);
      expect(after.filter((f) => f.endsWith(".tmp"))).toEqual([]);
      for (const f of after) {
        const size = statSync(join(dataDir, f)).size;
        if (statSync(join(dataDir, f)).isDirectory()) continue;
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
      const events = await t.deps.store.usage.eventsOfDay(today);
      let written = 0;
      for await (const e of events) if (e.accountId === account && e.status === 200) written++;
      expect(written).toBe(served + 1);
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
