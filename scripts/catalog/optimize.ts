/**
 * Sanitize + optimize many SVGs: a content-hash cache (build/.svgo-cache.json) and worker
 * threads for the misses. Ids are optimized with a placeholder prefix, so one cached result
 * serves every brand/variant that uses the same artwork (see withIdPrefix). Jobs flagged
 * `mono` also get a mono mark derived from their optimized result (scripts/catalog/mono.ts)
 * in the same worker, cached under monoKey.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { ThreadPool } from "../../src/platform/thread-pool";
import type { MonoResult } from "./mono";
import { ID_TOKEN } from "./optimize-shared";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * One SVG to optimize; `paths: false` for artwork already path-optimized upstream; `mono`
 * also derives a mono mark from the result.
 */
export interface OptimizeJob {
  svg: string;
  paths: boolean;
  mono?: boolean;
}

/** Cache and result key of a job's optimized SVG (the mono flag plays no part). */
export const jobKey = (job: OptimizeJob) => sha256(`${job.paths ? "full" : "light"}\n${job.svg}`);

/** Cache key of the mono mark derived from a job's result; `monoVersion` hashes mono.ts & co. */
export const monoKey = (key: string, monoVersion: string) => sha256(`mono\n${monoVersion}\n${key}`);

type CacheEntry = string | null | MonoResult;

interface CacheFile {
  pipeline: string;
  entries: Record<string, CacheEntry>;
}

/** What a worker is asked: [key, svg, paths, optimized svg when cached, mono cache key or null]. */
export type WorkerTask = [string, string, boolean, string | null, string | null];
/** What a worker answers: [key, optimized svg or null, mono cache key or null, mono result or null]. */
export type WorkerResult = [string, string | null, string | null, MonoResult | null];

export interface OptimizeStats {
  inputs: number;
  cached: number;
  optimized: number;
  failed: number;
  workers: number;
  /** mono marks asked for, and how many of them came from the cache */
  monos: number;
  monosCached: number;
}

function readCache(file: string, pipeline: string): Record<string, CacheEntry> {
  try {
    const data: CacheFile = JSON.parse(readFileSync(file, "utf8"));
    return data.pipeline === pipeline ? data.entries : {};
  } catch {
    return {};
  }
}

/** The tasks on `workerCount` svgo threads: biggest first, in small batches handed out on demand. */
async function runWorkers(tasks: WorkerTask[], workerCount: number): Promise<WorkerResult[]> {
  const queue = [...tasks].sort((a, b) => b[1].length - a[1].length);
  const batches: WorkerTask[][] = [];
  while (queue.length) {
    const batch: WorkerTask[] = [];
    let size = 0;
    while (queue.length && batch.length < 64 && size < 400_000) {
      const task = queue.shift() as WorkerTask;
      batch.push(task);
      size += task[1].length;
    }
    batches.push(batch);
  }
  const pool = new ThreadPool<WorkerTask[], WorkerResult[]>({
    name: "svgo",
    url: new URL("./svgo-worker.ts", import.meta.url),
    size: workerCount,
  });
  try {
    return (await Promise.all(batches.map((batch) => pool.run(batch)))).flat();
  } catch (err) {
    throw new Error(`svgo worker failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await pool.close();
  }
}

/**
 * Optimized markup for each job (keyed by jobKey), null where svgo could not parse it, and
 * for `mono` jobs the derived mono mark or skip reason (keyed by jobKey too). The outputs
 * still carry ID_TOKEN as id prefix.
 */
export async function optimizeAll(
  inputs: OptimizeJob[],
  cacheFile: string,
  pipeline: string,
  monoVersion: string,
): Promise<{
  results: Map<string, string | null>;
  monos: Map<string, MonoResult>;
  stats: OptimizeStats;
}> {
  const cache = readCache(cacheFile, pipeline);
  const jobs = new Map<string, OptimizeJob>();
  for (const job of inputs) {
    const key = jobKey(job);
    const seen = jobs.get(key);
    jobs.set(key, { ...job, mono: Boolean(seen?.mono || job.mono) });
  }
  const results = new Map<string, string | null>();
  const monos = new Map<string, MonoResult>();
  const tasks: WorkerTask[] = [];
  let cached = 0;
  let monosCached = 0;
  for (const [key, job] of jobs) {
    const hit = cache[key];
    const optimized = typeof hit === "string" || hit === null ? hit : undefined;
    const mk = job.mono ? monoKey(key, monoVersion) : null;
    const monoHit = mk ? cache[mk] : undefined;
    const mono = monoHit && typeof monoHit === "object" ? monoHit : undefined;
    if (optimized !== undefined) {
      results.set(key, optimized);
      cached++;
    }
    if (mono) {
      monos.set(key, mono);
      monosCached++;
    }
    const needsSvg = optimized === undefined;
    const needsMono = mk !== null && !monos.has(key);
    if (needsSvg || needsMono)
      tasks.push([key, job.svg, job.paths, optimized ?? null, needsMono ? mk : null]);
  }
  const optimized = tasks.filter((t) => t[3] === null).length;
  const workers = tasks.length ? Math.max(1, Math.min(4, availableParallelism())) : 0;
  if (tasks.length) {
    const entries: Record<string, CacheEntry> = {};
    for (const [key, svg, mk, mono] of await runWorkers(tasks, workers)) {
      results.set(key, svg);
      if (mono) monos.set(key, mono);
      if (mk && mono) entries[mk] = mono;
    }
    for (const [key, job] of jobs) {
      entries[key] = results.get(key) ?? null;
      const mono = monos.get(key);
      if (job.mono && mono) entries[monoKey(key, monoVersion)] = mono;
    }
    mkdirSync(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const data: CacheFile = { pipeline, entries };
    writeFileSync(tmp, JSON.stringify(data));
    renameSync(tmp, cacheFile);
  }
  const failed = [...results.values()].filter((v) => v === null).length;
  const monoJobs = [...jobs.values()].filter((j) => j.mono).length;
  return {
    results,
    monos,
    stats: {
      inputs: jobs.size,
      cached,
      optimized,
      failed,
      workers,
      monos: monoJobs,
      monosCached,
    },
  };
}

/** Replace the placeholder id prefix with the final one. */
export function withIdPrefix(svg: string, prefix: string): string {
  return svg.split(ID_TOKEN).join(prefix);
}
