import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { captureLogs } from "../../src/platform/log";
import { EmbeddedUsageLog } from "../../src/usage/log/embedded";
import { hourlyCutoff, retentionCutoff, startRetention } from "../../src/usage/retention";
import { makeApp, tempDir } from "../support/app";
import { accountEvents, batchesOf, storedEvents, until } from "./util";

/** USAGE_RETENTION_DAYS: raw events go after N days, their daily counts stay forever. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const at = (day: string, status = 200, accountId = "acc-r") => ({
  at: Date.parse(`${day}T12:00:00.000Z`),
  status,
  accountId,
});

describe("usage retention", () => {
  test("the cutoff keeps `days` UTC days, today included", () => {
    const now = new Date("2026-03-01T10:00:00Z");
    expect(retentionCutoff(1, now)).toBe("2026-03-01");
    expect(retentionCutoff(90, now)).toBe("2025-12-02");
    expect(hourlyCutoff(2, now)).toBe("2026-02-28T00");
  });

  test("removes the events of old days, keeps their daily counts, and survives a restart", async () => {
    const dir = tempDir("usage-ret-");
    dirs.push(dir);
    const store = EmbeddedUsageLog.open(dir);
    await store.append(batchesOf([at("2026-01-01"), at("2026-01-01", 429), at("2026-01-01", 404)]));
    await store.append(batchesOf([at("2026-02-10"), at("2026-02-10")]));
    await store.append(batchesOf([at("2026-03-01")]));
    const r = await store.prune("2026-02-10");
    expect(r).toEqual({ days: 1, events: 3 });
    expect([...new Set(storedEvents(store.db).map((e) => e.day))]).toEqual([
      "2026-02-10",
      "2026-03-01",
    ]);
    expect(await accountEvents(store, "acc-r", "2026-01-01")).toEqual([]);
    const rows = async (s: EmbeddedUsageLog) =>
      (await s.daily("acc-r", "2026-01-01", "2026-03-31")).map((x) => [
        x.day,
        x.requests,
        x.errors,
        x.rateLimited,
      ]);
    const expected = [
      ["2026-01-01", 3, 1, 1],
      ["2026-02-10", 2, 0, 0],
      ["2026-03-01", 1, 0, 0],
    ];
    expect(await rows(store)).toEqual(expected);
    // a second pass changes nothing; a rebuild and a restart keep the archived day
    expect(await store.prune("2026-02-10")).toEqual({ days: 0, events: 0 });
    await store.rebuild();
    expect(await rows(store)).toEqual(expected);
    await store.close();
    const again = EmbeddedUsageLog.open(dir);
    expect(await rows(again)).toEqual(expected);
    await again.close();
  });

  test("the service prunes at start with USAGE_RETENTION_DAYS, and hourly cells with USAGE_HOURLY_DAYS", async () => {
    const dir = tempDir("usage-ret-app-");
    dirs.push(dir);
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    const older = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    const seed = EmbeddedUsageLog.open(dir);
    await seed.append(batchesOf([at(old), at(older)]));
    // the hourly cells are there to begin with
    expect(await seed.cells("acc-r", "hour", "bs", `${older}T00`, `${older}T23`)).toHaveLength(1);
    await seed.close();
    const t = await makeApp({ DATA_DIR: dir, USAGE_RETENTION_DAYS: "5", USAGE_HOURLY_DAYS: "2" });
    try {
      const usage = t.deps.store.usage;
      await until(async () => (await accountEvents(usage, "acc-r", old)).length === 0, 5_000);
      await until(
        async () =>
          (await usage.cells("acc-r", "hour", "bs", `${older}T00`, `${older}T23`)).length === 0,
        5_000,
      );
      expect((await usage.daily("acc-r", old, old))[0]?.requests).toBe(1);
      expect((await usage.daily("acc-r", older, older))[0]?.requests).toBe(1);
      expect(await accountEvents(usage, "acc-r", older)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  test("a failed prune is logged and retried, never thrown", async () => {
    let calls = 0;
    const r = startRetention(
      {
        prune: async () => {
          calls++;
          throw new Error("disk on fire");
        },
      },
      90,
      60_000,
    );
    const log = captureLogs();
    try {
      await r.run();
    } finally {
      log.restore();
      r.stop();
    }
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: "error", error: "disk on fire" }),
    );
  });

  test("stop() waits for the prune under way (the store is closed after it)", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = false;
    let finished = false;
    const r = startRetention(
      {
        prune: async () => {
          started = true;
          await gate;
          finished = true;
          return { days: 0, events: 0 };
        },
      },
      90,
      60_000,
    );
    void r.run();
    await until(() => started, 4_000, "the prune to start");
    let stopped = false;
    const stopping = r.stop().then(() => {
      stopped = true;
    });
    // the prune is held: stop() cannot have resolved, however many turns pass
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
  });
});
