/**
 * Worker thread: sanitize + optimize batches of SVGs with svgo, and derive mono marks from
 * the results where asked (see optimize.ts).
 */
import { sanitizeAndOptimizeSvg } from "../../src/catalog/sanitize";
import { deriveMono } from "./mono";
import type { WorkerResult, WorkerTask } from "./optimize";
import { ID_TOKEN } from "./optimize-shared";

declare const self: Worker;

function optimizeOne(svg: string, paths: boolean): string | null {
  try {
    return sanitizeAndOptimizeSvg(svg, ID_TOKEN, { paths });
  } catch {
    return null;
  }
}

self.onmessage = (event: MessageEvent<{ batch: WorkerTask[] }>) => {
  const results: WorkerResult[] = event.data.batch.map(([key, svg, paths, cached, monoKey]) => {
    const optimized = cached ?? optimizeOne(svg, paths);
    if (!monoKey) return [key, optimized, null, null];
    const mono = optimized === null ? { skipped: "could not be processed" } : deriveMono(optimized);
    return [key, optimized, monoKey, mono];
  });
  self.postMessage({ results });
};
