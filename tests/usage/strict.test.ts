import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setLogLevel } from "../../src/platform/log";
import { LogRecorder } from "../../src/usage/log/recorder";
import { makeApp, type TestApp, tempDir } from "../support/app";
import { accountEvents, SwitchableStore, until } from "./util";

/**
 * USAGE_DURABILITY=strict through the app: a metered request is answered once its event is
 * written (the restart test kills the real process right after the answers), and a request
 * whose event was dropped is answered 503 storage_unavailable.
 */
const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
  setLogLevel("info");
});
const today = () => new Date().toISOString().slice(0, 10);

describe("USAGE_DURABILITY=strict", () => {
  test("every answer, 200 and 404, has its event in the log when it arrives (no flush, flush window of a minute)", async () => {
    const t = await makeApp({ USAGE_DURABILITY: "strict", USAGE_FLUSH_MS: "60000" });
    apps.push(t);
    const key = await t.key("pro");
    const account = (await t.deps.accounts.verifyKey(key))?.accountId;
    const statuses: number[] = [];
    for (const slug of ["github", "no-such-brand-xyz", "gitlab"]) {
      const r = await t.get(`/v1/catalog/${slug}`, key);
      statuses.push(r.status);
      const events = await accountEvents(t.deps.store.usage, account ?? "", today());
      expect(events.map((e) => e.status)).toEqual(statuses);
    }
    expect(statuses).toEqual([200, 404, 200]);
  });

  test("an event that can be neither written nor spilled past the memory bound: 503 storage_unavailable; a held one waits for the store", async () => {
    setLogLevel("error");
    const dir = tempDir("strict-");
    const spillDir = join(dir, "spill");
    let store: SwitchableStore | undefined;
    const t = await makeApp(
      { USAGE_DURABILITY: "strict" },
      {
        customize: async (deps) => {
          await deps.usage.close();
          store = new SwitchableStore(deps.store.usage);
          store.down = true;
          deps.usage = new LogRecorder(store, {
            flushMs: 20,
            flushEvents: 10,
            spillDir,
            maxBuffered: 1,
            maxHeld: 1,
            backoffMinMs: 5,
            backoffMaxMs: 20,
            durability: "strict",
          });
          // nor can anything be spilled: a file where the spill directory was
          rmSync(spillDir, { recursive: true });
          writeFileSync(spillDir, "not a directory");
        },
      },
    );
    apps.push(t);
    const key = await t.key("pro");
    // held in memory (the one event the bound allows): its answer waits
    const held = t.get("/v1/catalog/github", key);
    await until(() => t.deps.usage.condition?.().held === 1, 10_000, "the first event held");
    const dropped = await t.get("/v1/catalog/github", key);
    expect(dropped.status).toBe(503);
    expect(await dropped.json()).toMatchObject({ error: "storage_unavailable" });
    expect(dropped.headers.get("retry-after")).toBe("5");
    // the store is back: the held event is written and its request answered
    if (store) store.down = false;
    expect((await held).status).toBe(200);
  });
});
