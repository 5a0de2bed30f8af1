/** The build's svgo step (scripts/catalog/optimize.ts): worker threads, results and their cache. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { deriveMono } from "../../../scripts/catalog/mono";
import { jobKey, type OptimizeJob, optimizeAll } from "../../../scripts/catalog/optimize";
import { ID_TOKEN } from "../../../scripts/catalog/optimize-shared";
import { sanitizeAndOptimizeSvg } from "../../../src/catalog/sanitize";
import { tempDir } from "../../support/temp";

const dir = tempDir("optimize-");

const svg = (body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><title>T</title>${body}</svg>`;
const JOBS: OptimizeJob[] = [
  ...Array.from({ length: 80 }, (_, i) => ({
    svg: svg(
      `<rect x="${i % 50}" width="40.0000" height="40" fill="#${(i * 4099).toString(16).padStart(6, "0").slice(0, 6)}"/>`,
    ),
    paths: true,
  })),
  { svg: svg('<circle cx="50" cy="50" r="40" fill="#f25022"/>'), paths: false, mono: true },
  { svg: "<svg", paths: true },
];

describe("optimizeAll", () => {
  test("optimizes on worker threads what it would inline, derives monos, then serves all from its cache", async () => {
    const cache = join(dir, "svgo-cache.json");
    const first = await optimizeAll(JOBS, cache, "p1", "m1");
    expect(first.stats).toMatchObject({
      inputs: 82,
      cached: 0,
      optimized: 82,
      failed: 1,
      monos: 1,
    });
    expect(first.stats.workers).toBeGreaterThanOrEqual(1);
    for (const job of JOBS) {
      let inline: string | null;
      try {
        inline = sanitizeAndOptimizeSvg(job.svg, ID_TOKEN, { paths: job.paths });
      } catch {
        inline = null;
      }
      expect(first.results.get(jobKey(job))).toBe(inline);
    }
    const monoJob = JOBS[80] as OptimizeJob;
    const optimized = first.results.get(jobKey(monoJob)) as string;
    expect(first.monos.get(jobKey(monoJob))).toEqual(deriveMono(optimized));

    const again = await optimizeAll(JOBS, cache, "p1", "m1");
    expect(again.stats).toMatchObject({ cached: 82, optimized: 0, workers: 0, monosCached: 1 });
    expect(again.results).toEqual(first.results);
    expect(again.monos).toEqual(first.monos);
  });
});
