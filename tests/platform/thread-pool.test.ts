import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  setDefaultTimeout,
  test,
} from "bun:test";
import { join } from "node:path";
import { setLogLevel } from "../../src/platform/log";
import {
  ThreadDied,
  ThreadPool,
  ThreadPoolBusy,
  type ThreadPoolOptions,
  ThreadTimedOut,
} from "../../src/platform/thread-pool";
import { ManualTimers } from "../support/clock";
import { tempDir } from "../support/temp";
import type { TestJob } from "./thread-pool-worker";

/**
 * The one worker pool of the render pool, the artwork worker and the catalog build's svgo
 * workers, on real threads running tests/platform/thread-pool-worker.ts.
 */
setDefaultTimeout(60_000);
const ROOT = join(import.meta.dir, "../..");
const WORKER = new URL("./thread-pool-worker.ts", import.meta.url);
const pools: ThreadPool<TestJob, unknown>[] = [];
const make = (o: Partial<ThreadPoolOptions<TestJob, unknown>> = {}) => {
  const pool = new ThreadPool<TestJob, unknown>({ name: "test", url: WORKER, size: 1, ...o });
  pools.push(pool);
  return pool;
};
const inline = async (job: TestJob) => ({ inline: job.op });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: Error) => e,
  );
beforeAll(() => setLogLevel("error"));
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});
afterAll(() => setLogLevel("info"));

describe("ThreadPool", () => {
  test("answers each caller its own job, on up to `size` threads started on demand", async () => {
    const pool = make({ size: 2 });
    expect(pool.stats().workers).toBe(0);
    const out = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.run({ op: "echo", value: i })),
    );
    expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(pool.stats()).toEqual({ workers: 2, running: 0, queued: 0, retired: 0 });
  });

  test("a job that throws rejects with its message and code; the thread serves on", async () => {
    const pool = make();
    const err = await failure(pool.run({ op: "fail", message: "bad input", code: "E_BAD" }));
    expect(err?.message).toBe("bad input");
    expect((err as Error & { code?: string }).code).toBe("E_BAD");
    expect(await pool.run({ op: "echo", value: 1 })).toBe(1);
    expect(pool.stats().retired).toBe(0);
  });

  test("progress reports reach the caller before the answer; transferred bytes arrive whole", async () => {
    const pool = make();
    const steps: unknown[] = [];
    expect(await pool.run({ op: "steps", n: 4 }, { progress: (p) => steps.push(p) })).toBe(4);
    expect(steps).toEqual([1, 2, 3, 4]);
    expect([...((await pool.run({ op: "bytes", n: 3 })) as Uint8Array)]).toEqual([7, 7, 7]);
  });

  test("a job past timeoutMs fails and its thread is replaced; the next job runs on a new one", async () => {
    const timers = new ManualTimers();
    const pool = make({ timeoutMs: 50, timers });
    const spinning = failure(pool.run({ op: "spin", ms: 5_000 }));
    expect(timers.pending).toEqual([50]);
    timers.advance(50);
    const err = await spinning;
    expect(err).toBeInstanceOf(ThreadTimedOut);
    expect(pool.stats().retired).toBe(1);
    expect(await pool.run({ op: "echo", value: "after" })).toBe("after");
    expect(pool.available).toBe(true);
  });

  test("a thread that crashes fails its job (ThreadDied), and the next job starts a new thread", async () => {
    const pool = make();
    expect(await pool.run({ op: "echo", value: 1 })).toBe(1);
    expect(await failure(pool.run({ op: "crash" }))).toBeInstanceOf(ThreadDied);
    expect(await pool.run({ op: "echo", value: 2 })).toBe(2);
    expect(pool.stats().retired).toBe(1);
    expect(pool.available).toBe(true);
  });

  test("kill() ends the threads as a crash would; queued jobs go on on a new thread", async () => {
    const pool = make();
    expect(await pool.run({ op: "echo", value: 1 })).toBe(1);
    const running = failure(pool.run({ op: "spin", ms: 2_000 }));
    const queued = pool.run({ op: "echo", value: "seen" });
    pool.kill();
    expect(await running).toBeInstanceOf(ThreadDied);
    expect(await queued).toEqual(["echo"]);
    expect(pool.available).toBe(true);
  });

  test("with rerunCrashed, a crashed thread's job runs inline instead", async () => {
    const pool = make({ inline, rerunCrashed: true });
    expect(await pool.run({ op: "echo", value: 1 })).toBe(1);
    expect(await pool.run({ op: "crash" })).toEqual({ inline: "crash" });
    expect(pool.available).toBe(true);
  });

  test("a worker script that cannot start: jobs run inline from then on, or fail without `inline`", async () => {
    const missing = new URL("./no-such-worker.ts", import.meta.url);
    const pool = make({ url: missing, inline });
    expect(await pool.run({ op: "echo", value: 1 })).toEqual({ inline: "echo" });
    expect(pool.available).toBe(false);
    expect(await pool.run({ op: "echo", value: 2 })).toEqual({ inline: "echo" });
    const bare = make({ url: missing });
    expect(await failure(bare.run({ op: "echo", value: 1 }))).toBeInstanceOf(ThreadDied);
    expect(await failure(make({ url: null }).run({ op: "echo", value: 1 }))).toBeInstanceOf(
      ThreadDied,
    );
  });

  test("`init` goes first to every new thread; an init that fails makes threads unavailable", async () => {
    const pool = make({ init: { op: "init", ok: true } });
    expect(await pool.run({ op: "echo", value: "seen" })).toEqual(["init", "echo"]);
    const broken = make({ init: { op: "init", ok: false }, inline });
    expect(await broken.run({ op: "echo", value: 1 })).toEqual({ inline: "echo" });
    expect(broken.available).toBe(false);
  });

  test("a job that would wait past maxWaitMs, or beyond maxQueued, is refused at once", async () => {
    const pool = make({ maxWaitMs: 100, cost: (j) => (j.op === "spin" ? j.ms : 1) });
    const running = pool.run({ op: "spin", ms: 300 });
    const err = await failure(pool.run({ op: "echo", value: 1 }));
    expect(err).toBeInstanceOf(ThreadPoolBusy);
    expect((err as ThreadPoolBusy).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await running).toBe(300);
    expect(await pool.run({ op: "echo", value: 2 })).toBe(2);

    const capped = make({ maxQueued: 1 });
    const first = capped.run({ op: "spin", ms: 100 });
    const second = capped.run({ op: "echo", value: "queued" });
    expect(await failure(capped.run({ op: "echo", value: "third" }))).toBeInstanceOf(
      ThreadPoolBusy,
    );
    expect([await first, await second]).toEqual([100, "queued"]);
  });

  test("a thread ends once its jobs' work reaches recycleAfter; the jobs go on on a new one", async () => {
    const pool = make({ recycleAfter: 5, work: (j) => (j.op === "bytes" ? j.n : 1) });
    for (let i = 0; i < 6; i++) await pool.run({ op: "bytes", n: 2 });
    expect(pool.stats().retired).toBe(2);
    expect(await pool.run({ op: "echo", value: "seen" })).toEqual(["echo"]);
  });

  test("perThread > 1 posts several jobs to one thread, which runs them in order", async () => {
    const pool = make({ perThread: Infinity });
    const jobs = [pool.run({ op: "spin", ms: 50 }), pool.run({ op: "echo", value: "seen" })];
    expect(pool.stats()).toMatchObject({ workers: 1, running: 2, queued: 0 });
    expect(await Promise.all(jobs)).toEqual([50, ["spin", "echo"]]);
  });

  test("close() fails the jobs running and waiting; a later job starts a new thread", async () => {
    const pool = make();
    const running = failure(pool.run({ op: "spin", ms: 2_000 }));
    const waiting = failure(pool.run({ op: "echo", value: 1 }));
    await pool.close();
    expect(await running).toBeInstanceOf(ThreadDied);
    expect(await waiting).toBeInstanceOf(ThreadDied);
    expect(await pool.run({ op: "echo", value: 2 })).toBe(2);
  });
});

describe("ThreadPool on each runtime", () => {
  const probe = join(import.meta.dir, "thread-pool-probe.ts");
  const expected = {
    echo: Array.from({ length: 12 }, (_, i) => i),
    fail: { message: "no", code: "E_NO" },
    steps: [1, 2, 3],
    bytes: [7, 7, 7, 7, 7],
    available: true,
    workers: 2,
  };
  const spawn = (cmd: string[]) => {
    const p = Bun.spawnSync(cmd, { cwd: ROOT, stderr: "pipe", timeout: 50_000 });
    expect({ exit: p.exitCode, stderr: p.stderr.toString() }).toEqual({ exit: 0, stderr: "" });
    return p.stdout.toString();
  };
  const run = (cmd: string[]) => JSON.parse(spawn(cmd));

  test("Bun", () => {
    expect(run([process.execPath, probe])).toEqual(expected);
  });

  test("Deno", () => {
    expect(run([join(ROOT, "node_modules/.bin/deno"), "run", "-A", probe])).toEqual(expected);
  });

  test("a `bun build` bundle with the worker as its own entry point", () => {
    const out = tempDir("thread-pool-bundle-");
    const worker = join(import.meta.dir, "thread-pool-worker.ts");
    spawn([process.execPath, "build", probe, worker, "--target=bun", `--outdir=${out}`]);
    expect(run([process.execPath, join(out, "thread-pool-probe.js")])).toEqual(expected);
  });
});
