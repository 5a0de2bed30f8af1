/**
 * Runs a few jobs on a ThreadPool and prints what came back as one JSON line: run by
 * tests/platform/thread-pool.test.ts on Bun, on Deno and as a `bun build` bundle.
 */
import { ThreadPool } from "../../src/platform/thread-pool";
import { findWorkerScript } from "../../src/platform/worker-script";
import type { TestJob } from "./thread-pool-worker";

const url = findWorkerScript(
  ["./thread-pool-worker.ts", "./thread-pool-worker.js"],
  import.meta.url,
);
const pool = new ThreadPool<TestJob, unknown>({ name: "probe", url, size: 2 });
const echo = await Promise.all(
  Array.from({ length: 12 }, (_, i) => pool.run({ op: "echo", value: i })),
);
const fail = await pool.run({ op: "fail", message: "no", code: "E_NO" }).catch((e) => ({
  message: e.message,
  code: e.code,
}));
const steps: unknown[] = [];
await pool.run({ op: "steps", n: 3 }, { progress: (p) => steps.push(p) });
const bytes = (await pool.run({ op: "bytes", n: 5 })) as Uint8Array;
console.log(
  JSON.stringify({
    echo,
    fail,
    steps,
    bytes: [...bytes],
    available: pool.available,
    workers: pool.stats().workers,
  }),
);
await pool.close();
