/**
 * Where discovered artwork is processed and enrichment records are derived: one background
 * Worker (artwork-worker.ts, on platform/thread-pool.ts), started on first use and left
 * idle-unref'd, so svgo, resvg and sharp never hold the request thread. Jobs run one at a time
 * in order; a runtime without Worker, or a worker script that cannot start, processes inline.
 * A job that runs longer than JOB_TIMEOUT_MS fails (and the worker is replaced).
 */
import { ThreadPool, ThreadTimedOut } from "../../platform/thread-pool";
import { findWorkerScript } from "../../platform/worker-script";
import type { Brand } from "../built-catalog";
import type { EnrichmentRecord } from "../enrichment/store/port";
import { type Artwork, type ArtworkJob, runWorkerJob, type WorkerJob } from "./artwork";

const JOB_TIMEOUT_MS = 10_000;
const SCRIPTS = [
  "./artwork-worker.ts",
  "./artwork-worker.js",
  "./catalog/discovery/artwork-worker.js",
];

export class ArtworkPool {
  private pool = new ThreadPool<WorkerJob, unknown>({
    name: "artwork",
    url: typeof Worker === "undefined" ? null : findWorkerScript(SCRIPTS, import.meta.url),
    size: 1,
    timeoutMs: JOB_TIMEOUT_MS,
    inline: runWorkerJob,
  });

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
    return this.pool.run(job).catch((err) => {
      if (err instanceof ThreadTimedOut)
        throw new Error(`processing took over ${JOB_TIMEOUT_MS} ms`);
      throw err;
    });
  }

  /** End the worker; jobs still waiting fail. */
  stop() {
    void this.pool.close();
  }
}
