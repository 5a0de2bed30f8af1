/**
 * Where renders run. resvg renders synchronously, so a render on the request thread blocks
 * every other request for its duration (several ms at 256 px, tens at 1024 px). By default
 * renders go to a small pool of web-standard Workers (Bun and Deno both have them); when
 * Workers are unavailable or the worker script cannot start (e.g. a bundle without it), the
 * pool falls back to rendering on the calling thread. `workerUrl` is for tests.
 */
import { availableParallelism } from "node:os";
import { log } from "../platform/log";
import { ThreadDied, ThreadPool, ThreadPoolBusy, ThreadTimedOut } from "../platform/thread-pool";
import { findWorkerScript } from "../platform/worker-script";
import type { Layout, RenderFormat } from "./render";
import type { RenderRequest } from "./render-worker";

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

/**
 * Renders on a platform/thread-pool.ts pool: one render per thread at a time, the queue bounded
 * by its expected wait (each render's cost estimated from its pixels, refined as renders finish),
 * a time limit per render, threads recycled by pixels rendered, a crashed thread's render re-run
 * inline, and rendering inline for good when the threads cannot start.
 */
export class WorkerPool implements Renderer {
  private readonly pool: ThreadPool<RenderRequest, Uint8Array>;
  private closed = false;
  /** running estimate of render cost: fixed ms plus ms per megapixel (EWMA) */
  private msPerMpx = 60;

  constructor(size: number, workerUrl: URL, opts: PoolOptions = {}) {
    const o = {
      maxWaitMs: 2_000,
      timeoutMs: 10_000,
      maxQueued: 256,
      recyclePixels: 64 * 1024 * 1024,
      ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
    };
    this.pool = new ThreadPool<RenderRequest, Uint8Array>({
      name: "render",
      url: workerUrl,
      size,
      maxWaitMs: o.maxWaitMs,
      timeoutMs: o.timeoutMs,
      maxQueued: o.maxQueued,
      cost: (req) => 5 + (req.size * req.size * this.msPerMpx) / 1_000_000,
      finished: (req, ms) => {
        const mpx = (req.size * req.size) / 1_000_000;
        if (mpx > 0.01) this.msPerMpx = 0.8 * this.msPerMpx + 0.2 * Math.max(1, (ms - 5) / mpx);
      },
      work: (req) => req.size * req.size,
      recycleAfter: o.recyclePixels,
      inline,
      rerunCrashed: true,
    });
  }

  get mode() {
    return this.pool.available ? ("workers" as const) : ("inline" as const);
  }

  /** threads running, renders waiting, threads ended so far (recycled or timed out) */
  stats() {
    const { workers, queued, retired } = this.pool.stats();
    return { workers, queued, retired };
  }

  render(svg: string, size: number, format: RenderFormat, layout?: Layout): Promise<Uint8Array> {
    if (this.closed) return renderInline(svg, size, format, layout);
    return this.pool.run({ svg, size, format, layout }).catch((err) => {
      if (err instanceof ThreadPoolBusy) throw new RenderBusy(err.retryAfterSeconds, "queue");
      if (err instanceof ThreadTimedOut) throw new RenderBusy(1, "timeout");
      if (err instanceof ThreadDied) throw new Error("renderer closed");
      throw err;
    });
  }

  async close() {
    this.closed = true;
    await this.pool.close();
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
