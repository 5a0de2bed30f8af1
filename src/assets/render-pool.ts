/**
 * Where renders run. resvg renders synchronously, so a render on the request thread blocks
 * every other request for its duration (several ms at 256 px, tens at 1024 px). By default
 * renders go to a small pool of web-standard Workers (Bun and Deno both have them); when
 * Workers are unavailable or the worker script cannot start (e.g. a bundle without it), the
 * pool falls back to rendering on the calling thread. `workerUrl` is for tests.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { log } from "../platform/log";
import type { RenderFormat } from "./model";
import type { RenderReply, RenderRequest } from "./render-worker";

export interface Renderer {
  render(svg: string, size: number, format: RenderFormat): Promise<Uint8Array>;
  /** "workers" while the pool is in use, "inline" when rendering on the calling thread */
  readonly mode: "workers" | "inline";
  close(): Promise<void>;
}

interface Pending {
  resolve(bytes: Uint8Array): void;
  reject(err: Error): void;
  job: RenderRequest;
}

interface WorkerLike {
  postMessage(message: RenderRequest): void;
  terminate(): void;
  addEventListener(type: string, listener: (event: Event) => void): void;
  ref?(): void;
  unref?(): void;
}

interface Slot {
  worker: WorkerLike;
  pending: Map<number, Pending>;
  /** answered at least once: it started fine */
  alive: boolean;
}

/** Default pool size: one thread per core beyond the one serving requests, 1..4. */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

async function renderInline(svg: string, size: number, format: RenderFormat) {
  const { renderRaster } = await import("./render");
  return renderRaster(svg, size, format);
}

/** Renders on the calling thread (the portable fallback; also used with workers: 0). */
export const inlineRenderer: Renderer = {
  mode: "inline",
  render: renderInline,
  async close() {},
};

class WorkerPool implements Renderer {
  private slots: Slot[] = [];
  private nextId = 1;
  private failed = false;
  private closed = false;

  constructor(
    private size: number,
    private workerUrl: URL,
  ) {}

  get mode() {
    return this.failed ? ("inline" as const) : ("workers" as const);
  }

  render(svg: string, size: number, format: RenderFormat): Promise<Uint8Array> {
    if (this.failed || this.closed) return renderInline(svg, size, format);
    if (this.slots.length < this.size) {
      try {
        this.spawn();
      } catch (err) {
        this.fail(err);
        return renderInline(svg, size, format);
      }
    }
    const slot = this.slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const job: RenderRequest = { id: this.nextId++, svg, size, format };
    return new Promise<Uint8Array>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref?.();
      slot.pending.set(job.id, { resolve, reject, job });
      slot.worker.postMessage(job);
    });
  }

  private spawn() {
    const worker = new Worker(this.workerUrl, { type: "module" }) as unknown as WorkerLike;
    const slot: Slot = { worker, pending: new Map(), alive: false };
    worker.unref?.();
    worker.addEventListener("message", (event) => {
      const reply = (event as MessageEvent<RenderReply>).data;
      slot.alive = true;
      const p = slot.pending.get(reply.id);
      if (!p) return;
      slot.pending.delete(reply.id);
      if (slot.pending.size === 0) worker.unref?.();
      if ("error" in reply) p.reject(new Error(reply.error));
      else p.resolve(reply.bytes);
    });
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      this.crashed(slot, (event as ErrorEvent).message ?? "worker error");
    });
    this.slots.push(slot);
  }

  /** A worker died: its jobs are re-run inline; a worker that never started disables the pool. */
  private crashed(slot: Slot, reason: string) {
    this.slots = this.slots.filter((s) => s !== slot);
    try {
      slot.worker.terminate();
    } catch {}
    if (!slot.alive) this.fail(new Error(reason));
    else log("warn", "render worker crashed; replacing it", { reason });
    for (const p of slot.pending.values())
      renderInline(p.job.svg, p.job.size, p.job.format).then(p.resolve, p.reject);
    slot.pending.clear();
  }

  private fail(err: unknown) {
    if (this.failed) return;
    this.failed = true;
    log("warn", "render workers unavailable; rendering on the request thread", {
      reason: err instanceof Error ? err.message : String(err),
    });
    for (const slot of this.slots) if (!slot.alive) this.crashed(slot, "pool disabled");
  }

  async close() {
    this.closed = true;
    for (const slot of this.slots) {
      for (const p of slot.pending.values()) p.reject(new Error("renderer closed"));
      slot.worker.terminate();
    }
    this.slots = [];
  }
}

/**
 * A renderer with `workers` threads (default `defaultWorkerCount()`); 0, or a runtime without
 * Worker, renders inline. Threads start on the first render.
 */
export function createRenderer(opts: { workers?: number; workerUrl?: URL } = {}): Renderer {
  const workers = opts.workers ?? defaultWorkerCount();
  if (workers <= 0 || typeof Worker === "undefined") return inlineRenderer;
  const url = opts.workerUrl ?? findWorkerScript();
  if (!url) {
    log("warn", "render worker script not found; rendering on the request thread", {
      looked: WORKER_SCRIPTS,
    });
    return inlineRenderer;
  }
  return new WorkerPool(workers, url);
}

/**
 * The worker script beside this module: the source (bun/deno src/main.ts) or, in a bundle,
 * the worker bundled as its own entry point (`bun build src/main.ts src/assets/render-worker.ts`
 * puts it at dist/assets/render-worker.js beside dist/main.js).
 */
const WORKER_SCRIPTS = ["./render-worker.ts", "./render-worker.js", "./assets/render-worker.js"];

function findWorkerScript(): URL | null {
  for (const rel of WORKER_SCRIPTS) {
    const url = new URL(rel, import.meta.url);
    if (url.protocol !== "file:" || existsSync(fileURLToPath(url))) return url;
  }
  return null;
}
