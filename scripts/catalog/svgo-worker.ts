/**
 * Worker thread (started by optimize.ts on src/platform/thread-pool.ts): sanitize + optimize
 * batches of SVGs with svgo, and derive mono marks from the results where asked.
 */
import { sanitizeAndOptimizeSvg } from "../../src/catalog/sanitize";
import { serveThreadJobs } from "../../src/platform/thread-pool";
import { deriveMono } from "./mono";
import type { WorkerResult, WorkerTask } from "./optimize";
import { ID_TOKEN } from "./optimize-shared";

function optimizeOne(svg: string, paths: boolean): string | null {
  try {
    return sanitizeAndOptimizeSvg(svg, ID_TOKEN, { paths });
  } catch {
    return null;
  }
}

serveThreadJobs((batch: WorkerTask[]) =>
  batch.map(([key, svg, paths, cached, monoKey]): WorkerResult => {
    const optimized = cached ?? optimizeOne(svg, paths);
    if (!monoKey) return [key, optimized, null, null];
    const mono = optimized === null ? { skipped: "could not be processed" } : deriveMono(optimized);
    return [key, optimized, monoKey, mono];
  }),
);
