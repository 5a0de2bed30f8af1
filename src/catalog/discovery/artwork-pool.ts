/**
 * Where discovered artwork is processed and enrichment records are derived: one background
 * Worker (artwork-worker.ts), started on first use and left idle-unref'd, so svgo, resvg and
 * sharp never hold the request thread. Jobs
 * run one at a time in order; a runtime without Worker, or a worker script that cannot start,
 * processes inline. A job that takes longer than JOB_TIMEOUT_MS fails (and the worker is
 * replaced).
 */
import { log } from "../../platform/log";
import { findWorkerScript, startWorker, type WorkerLike } from "../../platform/worker-script";
import type { Brand } from "../built-catalog";
import type { EnrichmentRecord } from "../enrichment/store/port";
import { type Artwork, type ArtworkJob, runWorkerJob, type WorkerJob } from "./artwork";

const JOB_TIMEOUT_MS = 10_000;
const SCRIPTS = [
  "./artwork-worker.ts",
  "./artwork-worker.js",
  "./catalog/discovery/artwork-worker.js",
];

type Pending = {
  resolve: (a: unknown) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
};

export class ArtworkPool {
  private worker: WorkerLike | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 0;
  private inline = typeof Worker === "undefined";

  process(job: ArtworkJob): Promise<Artwork> {
    return this.run(job) as Promise<Artwork>;
  }

  /** deriveEnrichment(brand) in the worker (EnrichmentService.useDeriver). */
  derive(brand: Brand): Promise<EnrichmentRecord> {
    return this.run({
      kind: "enrich",
      brand,
      now: new Date().toISOString(),
    }) as Promise<EnrichmentRecord>;
  }

  private run(job: WorkerJob): Promise<unknown> {
    if (this.inline) return runWorkerJob(job);
    const worker = this.worker ?? this.start();
    if (!worker) return runWorkerJob(job);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`processing took over ${JOB_TIMEOUT_MS} ms`));
        this.stop();
      }, JOB_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      worker.ref?.();
      worker.postMessage({ id, ...job });
    });
  }

  private start(): WorkerLike | null {
    const url = findWorkerScript(SCRIPTS, import.meta.url);
    if (!url) {
      this.inline = true;
      return null;
    }
    const worker = startWorker(url);
    worker.unref?.();
    worker.addEventListener("message", (event) => {
      const { id, ...reply } = (
        event as MessageEvent<{ id: number; result?: unknown; error?: string }>
      ).data;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      clearTimeout(p.timer);
      if (this.pending.size === 0) worker.unref?.();
      if (reply.error !== undefined) p.reject(new Error(reply.error));
      else p.resolve(reply.result);
    });
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      log("warn", "artwork worker failed", { reason: (event as ErrorEvent).message });
      this.stop();
    });
    this.worker = worker;
    return worker;
  }

  /** End the worker; jobs still waiting fail. */
  stop() {
    this.worker?.terminate();
    this.worker = null;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error("artwork worker stopped"));
    }
    this.pending.clear();
  }
}
