/**
 * Artwork worker (a web-standard Worker started by artwork-pool.ts): turns fetched image bytes
 * into storable artwork (svgo, resvg, sharp) and derives enrichment records (svgo) off the
 * request thread, one job per message, at a lower thread priority on Linux like the render
 * workers.
 */
import { setPriority } from "node:os";
import process from "node:process";
import { WORKER_NICE } from "../../platform/worker-script";
import { runWorkerJob, type WorkerJob } from "./artwork";

if (process.platform === "linux") {
  try {
    setPriority(WORKER_NICE);
  } catch {}
}

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<WorkerJob & { id: number }>) => void) | null;
  postMessage(message: { id: number; result?: unknown; error?: string }): void;
};

scope.onmessage = async (event) => {
  const { id, ...job } = event.data;
  try {
    scope.postMessage({ id, result: await runWorkerJob(job) });
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
