/**
 * One pool of web-standard Workers (Bun's and Deno's alike) for all off-thread work: the render
 * pool, discovery's artwork worker and the catalog build's svgo workers each configure one.
 * Threads start on demand up to `size`, each running `perThread` jobs at a time (the rest wait
 * in the pool's queue, first in first out); on Bun an idle thread is unref'd, so it never keeps
 * the process alive (Deno's Worker has no unref: there a script ends by closing its pools). A
 * job's answer comes back to its caller by id.
 *
 * Optional, per pool: a bound on the queue by its expected wait (`maxWaitMs`, from each job's
 * `cost`), a time limit per job (the thread is ended: its work cannot be interrupted), ending a
 * thread once it has done `recycleAfter` work (native memory a thread leaves behind goes with
 * it), a job sent first to every new thread (`init`), progress reports, and running jobs on the
 * calling thread (`inline`) when threads are unavailable: no Worker, no script, or a thread that
 * failed before it ever answered.
 *
 * The worker's side is `serveThreadJobs`. Messages: the pool posts `{ id, job }`; the worker
 * answers `{ id, progress }` any number of times, then `{ id, ok }` or `{ id, error, code }`.
 *
 * Of the thread pool libraries, tinypool does not run on Deno and workerpool not on Bun;
 * piscina runs on both but has no recycling by work done or fallback to the calling thread, and
 * a `bun build` bundle finds its worker entry only at the absolute path it was built at.
 */
import { setPriority } from "node:os";
import process from "node:process";
import { systemTimers, type Timers } from "./clock";
import { log } from "./log";
import { startWorker, WORKER_NICE, type WorkerLike } from "./worker-script";

export type JobMessage<J> = { id: number; job: J };
export type JobReply<R> =
  | { id: number; ok: R }
  | { id: number; error: string; code: string | null }
  | { id: number; progress: unknown };

/** The queue is full: the job would wait longer than `maxWaitMs` (or `maxQueued` jobs wait). */
export class ThreadPoolBusy extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("thread pool queue full");
  }
}

/** The job ran past `timeoutMs`; its thread was ended. */
export class ThreadTimedOut extends Error {
  constructor(readonly limitMs: number) {
    super(`job exceeded its time limit of ${limitMs} ms and was stopped`);
  }
}

/**
 * The job's thread ended before it answered (it crashed, the pool was closed, or threads are
 * unavailable and the pool has no `inline`): the job may or may not have run.
 */
export class ThreadDied extends Error {}

export interface ThreadPoolOptions<J, R> {
  /** names the pool in its log lines ("render", "artwork") */
  name: string;
  /** the worker script; null when none was found (threads unavailable from the start) */
  url: URL | null;
  /** most threads at once */
  size: number;
  /** jobs one thread runs at once (default 1) */
  perThread?: number;
  /** a job running longer than this fails with ThreadTimedOut and its thread is ended */
  timeoutMs?: number;
  /** the timers `timeoutMs` runs on (default the runtime's; tests move their own) */
  timers?: Timers;
  /** most jobs waiting at once; more fail with ThreadPoolBusy */
  maxQueued?: number;
  /** a job that would wait longer than this (by the `cost` of the work ahead) fails with ThreadPoolBusy */
  maxWaitMs?: number;
  /** a job's expected running time, ms (default 0) */
  cost?: (job: J) => number;
  /** told each job's running time as it finishes (to refine `cost`) */
  finished?: (job: J, ms: number) => void;
  /** a thread ends once the `work` of the jobs it ran (default 1 each) reaches this */
  recycleAfter?: number;
  work?: (job: J) => number;
  /** the job sent first to each new thread; its failure makes threads unavailable */
  init?: J;
  /** runs a job on the calling thread while threads are unavailable */
  inline?: (job: J) => Promise<R>;
  /** re-run inline (not fail) the jobs of a thread that crashed after it had started */
  rerunCrashed?: boolean;
}

export interface RunOptions {
  /** moved to the thread, not copied */
  transfer?: Transferable[];
  progress?: (p: unknown) => void;
}

interface Task<J, R> {
  id: number;
  job: J;
  resolve(value: R): void;
  reject(err: Error): void;
  /** performance.now() when queued, and when it started on a thread */
  queued: number;
  started: number;
  cost: number;
  opts: RunOptions;
  timer: unknown;
  /** the thread's `init` job (no work, not timed for `cost`) */
  init?: boolean;
}

interface Thread<J, R> {
  worker: WorkerLike<JobMessage<J>>;
  running: Map<number, Task<J, R>>;
  /** answered at least once: it started fine */
  alive: boolean;
  work: number;
  /** done its `recycleAfter` work: takes no more jobs, ends when its running ones are done */
  draining: boolean;
}

export class ThreadPool<J, R> {
  private threads: Thread<J, R>[] = [];
  private queue: Task<J, R>[] = [];
  private nextId = 1;
  private unavailable = false;
  private retired = 0;
  private readonly perThread: number;
  private readonly timers: Timers;

  constructor(private readonly options: ThreadPoolOptions<J, R>) {
    this.timers = options.timers ?? systemTimers;
    this.perThread = options.perThread ?? 1;
    if (!options.url || typeof Worker === "undefined") this.fail("no Worker or worker script");
  }

  /** true while jobs run on threads; false once they run inline (or fail) for good */
  get available(): boolean {
    return !this.unavailable;
  }

  /** threads running, jobs running and waiting, threads ended so far (recycled, timed out, crashed) */
  stats() {
    let running = 0;
    for (const t of this.threads) running += t.running.size;
    return {
      workers: this.threads.length,
      running,
      queued: this.queue.length,
      retired: this.retired,
    };
  }

  /** Run a job on a thread; resolves with its answer. */
  run(job: J, opts: RunOptions = {}): Promise<R> {
    if (this.unavailable) return this.runInline(job);
    const now = performance.now();
    const wait = this.expectedWait(now);
    if (
      wait > (this.options.maxWaitMs ?? Infinity) ||
      this.queue.length >= (this.options.maxQueued ?? Infinity)
    )
      return Promise.reject(new ThreadPoolBusy(Math.max(1, Math.ceil(wait / 1000))));
    return new Promise<R>((resolve, reject) => {
      const cost = this.options.cost?.(job) ?? 0;
      this.queue.push({
        id: this.nextId++,
        job,
        resolve,
        reject,
        queued: now,
        started: 0,
        cost,
        opts,
        timer: null,
      });
      this.dispatch();
    });
  }

  private runInline(job: J): Promise<R> {
    return this.options.inline
      ? this.options.inline(job)
      : Promise.reject(new ThreadDied("threads unavailable"));
  }

  /** ms until a job queued now would start: the work ahead of it spread over the threads */
  private expectedWait(now: number): number {
    let work = 0;
    for (const t of this.queue) work += t.cost;
    let busy = 0;
    for (const thread of this.threads)
      for (const t of thread.running.values()) {
        busy++;
        work += Math.max(0, t.cost - (now - t.started));
      }
    // a free slot (or a thread not started yet) takes it at once
    if (busy < this.options.size * this.perThread && this.queue.length === 0) return 0;
    return work / this.options.size;
  }

  /** Hand queued jobs to threads with a free slot, starting threads up to `size`. */
  private dispatch() {
    while (this.queue.length > 0 && !this.unavailable) {
      // before a thread is started: starting one is not time the job waited in the queue
      const now = performance.now();
      let thread = this.threads
        .filter((t) => !t.draining && t.running.size < this.perThread)
        .sort((a, b) => a.running.size - b.running.size)[0];
      if (!thread && this.threads.length < this.options.size) {
        try {
          thread = this.spawn();
        } catch (err) {
          this.fail(err instanceof Error ? err.message : String(err));
          return;
        }
      }
      if (!thread) return;
      const task = this.queue.shift() as Task<J, R>;
      // it waited past the bound after all (jobs slower than their cost): refused now
      if (now - task.queued > (this.options.maxWaitMs ?? Infinity)) {
        task.reject(new ThreadPoolBusy(Math.max(1, Math.ceil(this.expectedWait(now) / 1000))));
        continue;
      }
      this.send(thread, task);
    }
  }

  private send(thread: Thread<J, R>, task: Task<J, R>) {
    thread.running.set(task.id, task);
    task.started = performance.now();
    thread.worker.ref?.();
    if (this.options.timeoutMs !== undefined && Number.isFinite(this.options.timeoutMs))
      task.timer = this.timers.setTimeout(
        () => this.timedOut(thread, task),
        this.options.timeoutMs,
      );
    thread.worker.postMessage({ id: task.id, job: task.job }, task.opts.transfer ?? []);
  }

  private spawn(): Thread<J, R> {
    const worker = startWorker<JobMessage<J>>(this.options.url as URL);
    const thread: Thread<J, R> = {
      worker,
      running: new Map(),
      alive: false,
      work: 0,
      draining: false,
    };
    worker.unref?.();
    worker.addEventListener("message", (event) =>
      this.answer(thread, (event as MessageEvent<JobReply<R>>).data),
    );
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      this.ended(thread, (event as ErrorEvent).message ?? "worker error");
    });
    this.threads.push(thread);
    if (this.options.init !== undefined) {
      const init = this.options.init;
      this.send(thread, {
        id: this.nextId++,
        job: init,
        resolve() {},
        reject: (err) => this.ended(thread, err.message, "init"),
        queued: performance.now(),
        started: 0,
        cost: 0,
        opts: {},
        timer: null,
        init: true,
      });
    }
    return thread;
  }

  private answer(thread: Thread<J, R>, reply: JobReply<R>) {
    thread.alive = true;
    const task = thread.running.get(reply.id);
    if (!task) return;
    if ("progress" in reply) return task.opts.progress?.(reply.progress);
    this.settle(thread, task);
    if (!task.init) {
      this.options.finished?.(task.job, performance.now() - task.started);
      thread.work += this.options.work?.(task.job) ?? 1;
    }
    if ("ok" in reply) task.resolve(reply.ok);
    else task.reject(Object.assign(new Error(reply.error), reply.code ? { code: reply.code } : {}));
    if (thread.work >= (this.options.recycleAfter ?? Infinity)) thread.draining = true;
    if (thread.draining && thread.running.size === 0) this.retire(thread);
    this.dispatch();
  }

  /** The task is no longer running on its thread (answered, timed out or its thread ended). */
  private settle(thread: Thread<J, R>, task: Task<J, R>) {
    if (task.timer !== null) this.timers.clearTimeout(task.timer);
    task.timer = null;
    thread.running.delete(task.id);
    if (thread.running.size === 0) thread.worker.unref?.();
  }

  /** End a thread (its native memory goes with it); the next job starts a new one. */
  private retire(thread: Thread<J, R>) {
    if (!this.threads.includes(thread)) return;
    this.threads = this.threads.filter((t) => t !== thread);
    this.retired++;
    try {
      thread.worker.terminate();
    } catch {}
  }

  /** A job ran past the time limit: its work cannot be interrupted, so its thread is ended. */
  private timedOut(thread: Thread<J, R>, task: Task<J, R>) {
    if (!thread.running.has(task.id)) return;
    this.settle(thread, task);
    log("warn", `${this.options.name} job exceeded its time limit; thread replaced`, {
      limitMs: this.options.timeoutMs,
    });
    task.reject(new ThreadTimedOut(this.options.timeoutMs as number));
    this.ended(thread, "a job on the same thread timed out", "timeout");
  }

  /**
   * A thread ended (it crashed, its `init` failed, or a job on it timed out): its other jobs
   * fail with ThreadDied, or run inline. A crash before it ever answered, or a failed `init`,
   * makes threads unavailable.
   */
  private ended(thread: Thread<J, R>, reason: string, how: "crash" | "init" | "timeout" = "crash") {
    if (!this.threads.includes(thread)) return;
    this.retire(thread);
    const orphans = [...thread.running.values()];
    for (const task of orphans) this.settle(thread, task);
    if (how === "init" || (how === "crash" && !thread.alive)) this.fail(reason);
    else if (orphans.length > 0)
      log("warn", `${this.options.name} thread ended; replacing it`, { reason });
    for (const task of orphans) {
      if (this.options.inline && (this.unavailable || this.options.rerunCrashed))
        this.options.inline(task.job).then(task.resolve, task.reject);
      else task.reject(new ThreadDied(reason));
    }
    this.dispatch();
  }

  /** Threads are unavailable for good: queued jobs run inline (or fail). */
  private fail(reason: string) {
    if (this.unavailable) return;
    this.unavailable = true;
    log(
      "warn",
      this.options.inline
        ? `${this.options.name} threads unavailable; running on the calling thread`
        : `${this.options.name} threads unavailable`,
      { reason },
    );
    for (const thread of this.threads) if (!thread.alive) this.ended(thread, "threads unavailable");
    for (const task of this.queue.splice(0))
      this.runInline(task.job).then(task.resolve, task.reject);
  }

  /** End every thread abruptly, as a crash would (tests): its jobs fail or run inline. */
  kill() {
    for (const thread of [...this.threads]) this.ended(thread, "killed");
  }

  /** End every thread; jobs running or waiting fail with ThreadDied. A later job starts anew. */
  async close() {
    for (const task of this.queue.splice(0))
      task.reject(new ThreadDied(`${this.options.name} pool closed`));
    const threads = this.threads;
    this.threads = [];
    for (const thread of threads) {
      for (const task of [...thread.running.values()]) {
        this.settle(thread, task);
        task.reject(new ThreadDied(`${this.options.name} pool closed`));
      }
      try {
        thread.worker.terminate();
      } catch {}
    }
  }
}

/**
 * The worker's side: answers each `{ id, job }` with `handle(job)`'s result (its `transfer`
 * buffers moved, not copied) or error. `background` lowers the thread's priority (on Linux the
 * nice value is per thread, so the request thread keeps full priority when cores are busy;
 * elsewhere it would apply to the whole process, so it is skipped).
 */
export function serveThreadJobs<J, R>(
  handle: (job: J, progress: (p: unknown) => void) => R | Promise<R>,
  opts: { transfer?: (result: R) => Transferable[]; background?: boolean } = {},
) {
  if (opts.background && process.platform === "linux") {
    try {
      setPriority(WORKER_NICE);
    } catch {}
  }
  const scope = globalThis as unknown as {
    onmessage: ((event: MessageEvent<JobMessage<J>>) => void) | null;
    postMessage(message: JobReply<R>, transfer?: Transferable[]): void;
  };
  scope.onmessage = async (event) => {
    const { id, job } = event.data;
    try {
      const ok = await handle(job, (progress) => scope.postMessage({ id, progress }));
      scope.postMessage({ id, ok }, opts.transfer?.(ok) ?? []);
    } catch (err) {
      const e = err as { message?: string; code?: unknown };
      scope.postMessage({
        id,
        error: String(e?.message ?? err),
        code: typeof e?.code === "string" ? e.code : null,
      });
    }
  };
}
