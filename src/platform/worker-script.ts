import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Nice value of CPU-heavy worker threads (rendering, artwork) on Linux (0 = normal, 19 = lowest). */
export const WORKER_NICE = 10;

/**
 * A worker script's URL: the first of `candidates` (paths relative to `base`, a module's
 * import.meta.url) that exists. Candidates name the source (`./x-worker.ts`, run by bun or deno)
 * and the bundle's entry (`npm run build` emits each worker beside dist/main.js, under its path
 * relative to src/). A base that is not a file URL is taken at its first candidate.
 */
export function findWorkerScript(candidates: readonly string[], base: string): URL | null {
  for (const rel of candidates) {
    const url = new URL(rel, base);
    if (url.protocol !== "file:" || existsSync(fileURLToPath(url))) return url;
  }
  return null;
}

/** What the pools use of a web-standard Worker (Bun's and Deno's alike). */
export interface WorkerLike<M = unknown> {
  postMessage(message: M, transfer?: Transferable[]): void;
  terminate(): void;
  addEventListener(type: string, listener: (event: Event) => void): void;
  ref?(): void;
  unref?(): void;
}

/** Start a module worker from `url`. */
export const startWorker = <M>(url: URL): WorkerLike<M> =>
  new Worker(url, { type: "module" }) as unknown as WorkerLike<M>;
