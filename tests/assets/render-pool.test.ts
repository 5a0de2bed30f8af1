import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import {
  createRenderer,
  defaultWorkerCount,
  RenderBusy,
  type WorkerPool,
} from "../../src/assets/render-pool";
import { AssetService } from "../../src/assets/service";
import type { Brand } from "../../src/catalog/built-catalog";
import { setLogLevel } from "../../src/platform/log";
import { makeApp, type TestApp } from "../support/app";
import { until } from "../support/wait";
import { accountEvents } from "../usage/util";
import { pngSize } from "./util";

/**
 * The render pool under load: sized to the cores, a bounded queue (503 render_busy, not
 * charged), a time limit per render, recycled threads, and no charge when the client left.
 * Real renders of the real catalog's heaviest marks (largest mono SVG).
 */
let t: TestApp;
let heavy: Brand[];
beforeAll(async () => {
  setLogLevel("error");
  t = await makeApp();
  heavy = t.deps.catalog
    .all()
    .filter((b) => b.variants.mono)
    .sort((a, b) => (b.variants.mono?.svg.length ?? 0) - (a.variants.mono?.svg.length ?? 0))
    .slice(0, 8);
});
afterAll(async () => {
  await t.close();
  setLogLevel("info");
});

const svgOf = (b: Brand | undefined) => b?.variants.mono?.svg ?? "";

describe("render pool", () => {
  test("has one thread per core by default", () => {
    expect(defaultWorkerCount()).toBe(Math.max(1, Math.min(8, availableParallelism())));
  });

  test("refuses a render that would wait past maxWaitMs, and still serves the running one", async () => {
    const pool = createRenderer({ workers: 1, maxWaitMs: 50 }) as WorkerPool;
    try {
      const first = pool.render(svgOf(heavy[0]), 2048, "png");
      const second = pool.render(svgOf(heavy[1]), 2048, "png");
      const err = await second.then(
        () => null,
        (e) => e,
      );
      expect(err).toBeInstanceOf(RenderBusy);
      expect((err as RenderBusy).reason).toBe("queue");
      expect((err as RenderBusy).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(pngSize(await first)).toEqual({ width: 2048, height: 2048 });
      // once idle, it renders again
      expect(pngSize(await pool.render(svgOf(heavy[1]), 64, "png")).width).toBe(64);
    } finally {
      await pool.close();
    }
  });

  test("stops a render past its time limit and replaces the thread", async () => {
    const pool = createRenderer({ workers: 1, timeoutMs: 1 }) as WorkerPool;
    try {
      const err = await pool.render(svgOf(heavy[0]), 2048, "png").then(
        () => null,
        (e) => e,
      );
      expect(err).toBeInstanceOf(RenderBusy);
      expect((err as RenderBusy).reason).toBe("timeout");
      expect(pool.stats().retired).toBe(1);
    } finally {
      await pool.close();
    }
    const ok = createRenderer({ workers: 1 }) as WorkerPool;
    try {
      expect(pngSize(await ok.render(svgOf(heavy[0]), 128, "png")).width).toBe(128);
    } finally {
      await ok.close();
    }
  });

  test("ends a thread once it has rendered recyclePixels, and keeps rendering on a new one", async () => {
    const pool = createRenderer({ workers: 1, recyclePixels: 2 * 512 * 512 }) as WorkerPool;
    try {
      for (let i = 0; i < 5; i++)
        expect(pngSize(await pool.render(svgOf(heavy[i % 3]), 512, "png")).width).toBe(512);
      expect(pool.stats().retired).toBe(2);
    } finally {
      await pool.close();
    }
  });
});

describe("PNG/WebP routes under a full render queue", () => {
  let busy: TestApp;
  beforeAll(async () => {
    busy = await makeApp(
      {},
      {
        customize: async (deps) => {
          await deps.assets.close();
          deps.assets = new AssetService(
            deps.catalog,
            createRenderer({ workers: 1, maxWaitMs: 50 }),
            deps.assets.cache,
          );
        },
      },
    );
  });
  afterAll(() => busy.close());

  test("503 render_busy with Retry-After, {error, message}, and not charged", async () => {
    const key = await busy.key("free");
    expect(busy.deps.assets.poolStats()?.workers).toBe(0);
    const first = busy.get(`/v1/png/${heavy[2]?.slug}?size=2048`, key);
    // the first render has reached the pool's one worker (started for it)
    await until(() => busy.deps.assets.poolStats()?.workers === 1, 10_000, "the first render");
    const second = await busy.get(`/v1/webp/${heavy[3]?.slug}?size=2048`, key);
    expect(second.status).toBe(503);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = (await second.json()) as { error: string; message: string };
    expect(body.error).toBe("render_busy");
    expect(body.message).toMatch(/not charged/);
    expect((await first).status).toBe(200);
    const usage = (await (await busy.get("/v1/usage", key)).json()) as {
      endpoints: Record<string, { used: number }>;
    };
    expect(usage.endpoints.png?.used).toBe(1);
    expect(usage.endpoints.webp?.used).toBe(0);
  });
});

describe("a client that leaves before its render is ready", () => {
  test("is not charged, and its event is logged as 499", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: t.app.fetch });
    try {
      const key = await t.key("free");
      // this file's other tests render on pools of their own: t's starts its first thread here
      expect(t.deps.assets.poolStats()?.workers).toBe(0);
      const ctl = new AbortController();
      const gone = fetch(
        `http://127.0.0.1:${server.port}/v1/png/${heavy[4]?.slug}?size=2048&variant=mono`,
        { headers: { "x-api-key": key }, signal: ctl.signal },
      ).catch(() => null);
      // the request has reached the renderer: the render is under way when the client leaves
      await until(() => t.deps.assets.poolStats()?.workers === 1, 10_000, "the render");
      ctl.abort();
      expect(await gone).toBeNull();
      const usageOf = async () =>
        (
          (await (await t.get("/v1/usage", key)).json()) as {
            endpoints: Record<string, { used: number }>;
          }
        ).endpoints.png?.used;
      // wait until the render finished and the request was settled
      let events: { status: number }[] = [];
      const day = new Date().toISOString().slice(0, 10);
      await until(
        async () => {
          await t.deps.usage.flush();
          const accountId = (await t.deps.accounts.verifyKey(key))?.accountId ?? "";
          events = (await accountEvents(t.deps.store.usage, accountId, day)).filter(
            (e) => e.slug === heavy[4]?.slug && e.bucket === "png",
          );
          return events.length > 0;
        },
        20_000,
        "the abandoned request's event",
        50,
      );
      expect(events.map((e) => e.status)).toEqual([499]);
      expect(await usageOf()).toBe(0);
    } finally {
      server.stop(true);
    }
  });
});
