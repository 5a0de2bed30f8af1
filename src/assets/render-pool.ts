/**
 * Where renders run. resvg renders synchronously, so a render on the request thread blocks
 * every other request for its duration (several ms at 256 px, tens at 1024 px). By default
 * renders go to a small pool of web-standard Workers (Bun and Deno both have them); when
 * Workers are unavailable or the worker script cannot start (e.g. a bundle without it), the
 * pool falls back to rendering on the calling thread. `workerUrl` is for tests.
 */
import { availableParallelism } from "node:os";
import { log } from "../platform/log";
import { findWorkerScript, startWorker, type WorkerLike } from "../platform/worker-script";
import type { Layout, RenderFormat } from "./render";
import type { RenderReply, RenderRequest } from "./render-worker";

export interface Renderer {
  /** `layout` defaults to render.ts DEFAULT_LAYOUT */
  render(svg: string, size: number, format: RenderFormat, layout?: Layout): Promise<Uint8Array>;
  /** "workers" while the pool is in use, "inline" when rendering on the calling thread */
  readonly mode: "workers" | "inline";
  close(): Promise<void>;
}

/**
 * The render queue is full: the render would wait longer than the pool's `maxWaitMs` (or its
 * queue is at `maxQueued`). The route answers 503 render_busy with Retry-After; nothing is
 * charged (a 5xx gives its quota unit back).
 */
export class RenderBusy extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    readonly reason: "queue" | "timeout",
  ) {
    super(
      reason === "queue" ? "render queue full" : "render exceeded its time limit and was stopped",
    );
  }
}

export interface PoolOptions {
  /** worker threads (default: one per core) */
  workers?: number;
  workerUrl?: URL;
  /** a render that would wait longer than this in the queue is refused (RenderBusy) */
  maxWaitMs?: number;
  /** a render running longer than this is stopped (its worker is replaced) */
  timeoutMs?: number;
  /** most renders queued (not yet running) at once */
  maxQueued?: number;
  /**
   * a worker is replaced once it has rendered this many pixels: resvg-js leaves native memory
   * behind that the worker's collector does not reclaim (thx/resvg-js#216), and ending the
   * thread frees it. Default 64 Mpx, sixteen 2048 px renders.
   */
  recyclePixels?: number;
}

interface Job {
  req: RenderRequest;
  resolve(bytes: Uint8Array): void;
  reject(err: Error): void;
  /** performance.now() when queued */
  queued: number;
  /** estimated render time, ms (for the wait estimate) */
  cost: number;
}

interface Slot {
  worker: WorkerLike<RenderRequest>;
  /** the render running on this worker (one at a time: the queue stays here, not in the port) */
  job: Job | null;
  started: number;
  timer: ReturnType<typeof setTimeout> | null;
  /** answered at least once: it started fine */
  alive: boolean;
  pixels: number;
}

/** Default pool size: one render thread per core (renders run at a lower priority), 1..8. */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(8, availableParallelism()));
}

async function renderInline(svg: string, size: number, format: RenderFormat, layout?: Layout) {
  const { renderRaster } = await import("./render");
  return renderRaster(svg, size, format, layout);
}

const inline = (req: RenderRequest) => renderInline(req.svg, req.size, req.format, req.layout);

/** Renders on the calling thread (the portable fallback; also used with workers: 0). */
export const inlineRenderer: Renderer = {
  mode: "inline",
  render: renderInline,
  async close() {},
};

export class WorkerPool implements Renderer {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  private failed = false;
  private closed = false;
  /** running estimate of render cost: fixed ms plus ms per megapixel (EWMA) */
  private msPerMpx = 60;
  private retired = 0;
  private readonly o: Required<Omit<PoolOptions, "workerUrl" | "workers">>;

  constructor(
    private size: number,
    private workerUrl: URL,
    opts: PoolOptions = {},
  ) {
    this.o = {
      maxWaitMs: 2_000,
      timeoutMs: 10_000,
      maxQueued: 256,
      recyclePixels: 64 * 1024 * 1024,
      ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
    };
  }

  get mode() {
    return this.failed ? ("inline" as const) : ("workers" as const);
  }

  /** threads running, renders waiting, threads ended so far (recycled or timed out) */
  stats() {
    return { workers: this.slots.length, queued: this.queue.length, retired: this.retired };
  }

  private estimate(size: number): number {
    return 5 + (size * size * this.msPerMpx) / 1_000_000;
  }

  /** ms until a render queued now would start: the work ahead of it spread over the workers */
  private expectedWait(now: number): number {
    let work = 0;
    for (const j of this.queue) work += j.cost;
    let busy = 0;
    for (const s of this.slots)
      if (s.job) {
        busy++;
        work += Math.max(0, s.job.cost - (now - s.started));
      }
    // a free worker (or one not started yet) takes it at once
    if (busy < this.size && this.queue.length === 0) return 0;
    return work / this.size;
  }

  render(svg: string, size: number, format: RenderFormat, layout?: Layout): Promise<Uint8Array> {
    if (this.failed || this.closed) return renderInline(svg, size, format, layout);
    const now = performance.now();
    const wait = this.expectedWait(now);
    if (wait > this.o.maxWaitMs || this.queue.length >= this.o.maxQueued)
      return Promise.reject(new RenderBusy(Math.max(1, Math.ceil(wait / 1000)), "queue"));
    return new Promise<Uint8Array>((resolve, reject) => {
      this.queue.push({
        req: { id: this.nextId++, svg, size, format, layout },
        resolve,
        reject,
        queued: now,
        cost: this.estimate(size),
      });
      this.dispatch();
    });
  }

  /** Hand queued renders to idle workers (starting workers up to the pool size). */
  private dispatch() {
    while (this.queue.length > 0 && !this.failed && !this.closed) {
      // before a thread is started: starting one is not time the render waited in the queue
      const now = performance.now();
      let slot = this.slots.find((s) => !s.job);
      if (!slot && this.slots.length < this.size) {
        try {
          slot = this.spawn();
        } catch (err) {
          this.fail(err);
          return;
        }
      }
      if (!slot) return;
      const job = this.queue.shift() as Job;
      // it waited past the bound after all (renders slower than estimated): refuse it now
      if (now - job.queued > this.o.maxWaitMs) {
        job.reject(new RenderBusy(Math.max(1, Math.ceil(this.expectedWait(now) / 1000)), "queue"));
        continue;
      }
      slot.job = job;
      slot.started = performance.now();
      slot.worker.ref?.();
      const running = slot;
      slot.timer = setTimeout(() => this.timedOut(running), this.o.timeoutMs);
      slot.worker.postMessage(job.req);
    }
  }

  private spawn(): Slot {
    const worker = startWorker<RenderRequest>(this.workerUrl);
    const slot: Slot = { worker, job: null, started: 0, timer: null, alive: false, pixels: 0 };
    worker.unref?.();
    worker.addEventListener("message", (event) => {
      const reply = (event as MessageEvent<RenderReply>).data;
      slot.alive = true;
      const job = slot.job;
      if (!job || job.req.id !== reply.id) return;
      this.finish(slot);
      const ms = performance.now() - slot.started;
      const mpx = (job.req.size * job.req.size) / 1_000_000;
      if (mpx > 0.01) this.msPerMpx = 0.8 * this.msPerMpx + 0.2 * Math.max(1, (ms - 5) / mpx);
      slot.pixels += job.req.size * job.req.size;
      if ("error" in reply) job.reject(new Error(reply.error));
      else job.resolve(reply.bytes);
      if (slot.pixels >= this.o.recyclePixels) this.retire(slot);
      this.dispatch();
    });
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      this.crashed(slot, (event as ErrorEvent).message ?? "worker error");
    });
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot) {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    slot.worker.unref?.();
  }

  /** End a worker thread (its native memory goes with it); the next render starts a new one. */
  private retire(slot: Slot) {
    this.slots = this.slots.filter((s) => s !== slot);
    this.retired++;
    try {
      slot.worker.terminate();
    } catch {}
  }

  /** A render ran past the time limit: resvg cannot be interrupted, so its thread is ended. */
  private timedOut(slot: Slot) {
    const job = slot.job;
    if (!job) return;
    this.finish(slot);
    this.retire(slot);
    log("warn", "render exceeded its time limit; worker replaced", {
      size: job.req.size,
      format: job.req.format,
      limitMs: this.o.timeoutMs,
    });
    job.reject(new RenderBusy(1, "timeout"));
    this.dispatch();
  }

  /** A worker died: its render is re-run inline; a worker that never started disables the pool. */
  private crashed(slot: Slot, reason: string) {
    const job = slot.job;
    this.finish(slot);
    this.retire(slot);
    if (!slot.alive) this.fail(new Error(reason));
    else log("warn", "render worker crashed; replacing it", { reason });
    if (job) inline(job.req).then(job.resolve, job.reject);
    this.dispatch();
  }

  private fail(err: unknown) {
    if (this.failed) return;
    this.failed = true;
    log("warn", "render workers unavailable; rendering on the request thread", {
      reason: err instanceof Error ? err.message : String(err),
    });
    for (const slot of this.slots) if (!slot.alive) this.crashed(slot, "pool disabled");
    for (const job of this.queue.splice(0)) inline(job.req).then(job.resolve, job.reject);
  }

  async close() {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error("renderer closed"));
    for (const slot of this.slots) {
      slot.job?.reject(new Error("renderer closed"));
      this.finish(slot);
      slot.worker.terminate();
    }
    this.slots = [];
  }
}

/**
 * A renderer with `workers` threads (default `defaultWorkerCount()`); 0, or a runtime without
 * Worker, renders inline. Threads start on the first render.
 */
export function createRenderer(opts: PoolOptions = {}): Renderer {
  const workers = opts.workers ?? defaultWorkerCount();
  if (workers <= 0 || typeof Worker === "undefined") return inlineRenderer;
  const url = opts.workerUrl ?? findWorkerScript(WORKER_SCRIPTS, import.meta.url);
  if (!url) {
    log("warn", "render worker script not found; rendering on the request thread", {
      looked: WORKER_SCRIPTS,
    });
    return inlineRenderer;
  }
  return new WorkerPool(workers, url, opts);
}

/**
 * The worker script beside this module: the source (bun/deno src/main.ts) or, in a bundle,
 * the worker bundled as its own entry point (`bun build src/main.ts src/assets/render-worker.ts`
 * puts it at dist/assets/render-worker.js beside dist/main.js).
 */
const WORKER_SCRIPTS = ["./render-worker.ts", "./render-worker.js", "./assets/render-worker.js"];
