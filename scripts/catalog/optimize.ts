/**
 * Sanitize + optimize many SVGs: a content-hash cache (build/.svgo-cache.json) and worker
 * threads for the misses. Ids are optimized with a placeholder prefix, so one cached result
 * serves every brand/variant that uses the same artwork (see withIdPrefix).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { ID_TOKEN } from "./optimize-shared";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** One SVG to optimize; `paths: false` for artwork already path-optimized upstream. */
export interface OptimizeJob {
  svg: string;
  paths: boolean;
}

/** Cache and result key of a job. */
export const jobKey = (job: OptimizeJob) => sha256(`${job.paths ? "full" : "light"}\n${job.svg}`);

interface CacheFile {
  pipeline: string;
  entries: Record<string, string | null>;
}

export interface OptimizeStats {
  inputs: number;
  cached: number;
  optimized: number;
  failed: number;
  workers: number;
}

function readCache(file: string, pipeline: string): Record<string, string | null> {
  try {
    const data: CacheFile = JSON.parse(readFileSync(file, "utf8"));
    return data.pipeline === pipeline ? data.entries : {};
  } catch {
    return {};
  }
}

function runWorkers(
  jobs: [string, OptimizeJob][],
  workerCount: number,
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  // biggest first, small batches handed out on demand: keeps both cores busy to the end
  const queue = [...jobs].sort((a, b) => b[1].svg.length - a[1].svg.length);
  const nextBatch = () => {
    const batch: [string, string, boolean][] = [];
    let size = 0;
    while (queue.length && batch.length < 64 && size < 400_000) {
      const [key, job] = queue.shift() as [string, OptimizeJob];
      batch.push([key, job.svg, job.paths]);
      size += job.svg.length;
    }
    return batch;
  };
  return new Promise((resolve, reject) => {
    let active = 0;
    for (let i = 0; i < workerCount; i++) {
      const worker = new Worker(new URL("./svgo-worker.ts", import.meta.url).href);
      active++;
      const feed = () => {
        const batch = nextBatch();
        if (batch.length) worker.postMessage({ batch });
        else {
          worker.terminate();
          if (--active === 0) resolve(out);
        }
      };
      worker.onmessage = (event: MessageEvent<{ results: [string, string | null][] }>) => {
        for (const [key, svg] of event.data.results) out.set(key, svg);
        feed();
      };
      worker.onerror = (event) => reject(new Error(`svgo worker failed: ${event.message}`));
      feed();
    }
  });
}

/**
 * Optimized markup for each job (keyed by jobKey), null where svgo could not parse it.
 * The outputs still carry ID_TOKEN as id prefix.
 */
export async function optimizeAll(
  inputs: OptimizeJob[],
  cacheFile: string,
  pipeline: string,
): Promise<{ results: Map<string, string | null>; stats: OptimizeStats }> {
  const cache = readCache(cacheFile, pipeline);
  const results = new Map<string, string | null>();
  const misses = new Map<string, OptimizeJob>();
  for (const job of inputs) {
    const key = jobKey(job);
    if (results.has(key) || misses.has(key)) continue;
    const hit = cache[key];
    if (hit !== undefined) results.set(key, hit);
    else misses.set(key, job);
  }
  const cached = results.size;
  const workers = misses.size ? Math.max(1, Math.min(4, availableParallelism())) : 0;
  if (misses.size) {
    for (const [key, svg] of await runWorkers([...misses], workers)) results.set(key, svg);
    mkdirSync(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const data: CacheFile = { pipeline, entries: Object.fromEntries(results) };
    writeFileSync(tmp, JSON.stringify(data));
    renameSync(tmp, cacheFile);
  }
  const failed = [...results.values()].filter((v) => v === null).length;
  return {
    results,
    stats: { inputs: results.size, cached, optimized: misses.size, failed, workers },
  };
}

/** Replace the placeholder id prefix with the final one. */
export function withIdPrefix(svg: string, prefix: string): string {
  return svg.split(ID_TOKEN).join(prefix);
}
