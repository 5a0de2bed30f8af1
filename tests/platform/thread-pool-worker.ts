/** The worker of tests/platform/thread-pool.test.ts: each job names what the thread does. */
import { serveThreadJobs } from "../../src/platform/thread-pool";

export type TestJob =
  | { op: "echo"; value: unknown }
  | { op: "fail"; message: string; code?: string }
  | { op: "spin"; ms: number }
  | { op: "crash" }
  | { op: "steps"; n: number }
  | { op: "bytes"; n: number }
  | { op: "init"; ok: boolean };

/** what this thread has seen, in order (answered by "echo" with value "seen") */
const seen: string[] = [];

serveThreadJobs<TestJob, unknown>(
  async (job, progress) => {
    seen.push(job.op);
    switch (job.op) {
      case "echo":
        return job.value === "seen" ? seen : job.value;
      case "fail":
        throw Object.assign(new Error(job.message), job.code ? { code: job.code } : {});
      case "spin": {
        const end = performance.now() + job.ms;
        while (performance.now() < end);
        return job.ms;
      }
      case "crash":
        // thrown outside the job's promise: the thread's uncaught error ends it
        setTimeout(() => {
          throw new Error("boom");
        });
        return new Promise(() => {});
      case "steps":
        for (let i = 1; i <= job.n; i++) progress(i);
        return job.n;
      case "bytes":
        return new Uint8Array(job.n).fill(7);
      case "init":
        if (!job.ok) throw new Error("cannot open");
        return true;
    }
  },
  { transfer: (r) => (r instanceof Uint8Array ? [r.buffer as ArrayBuffer] : []) },
);
