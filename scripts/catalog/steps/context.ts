/**
 * What every build step shares: the file paths of one build, the progress logger (one stderr
 * line per phase) and atomic writes (temp file + rename, so concurrent builds never leave a
 * half-written file behind).
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface BuildPaths {
  root: string;
  catalogFile: string;
  idsFile: string;
  reportFile: string;
  attributionFile: string;
  svgoCacheFile: string;
  renderCacheFile: string;
  paintCacheFile: string;
}

export function buildPaths(root: string, catalogFile: string): BuildPaths {
  return {
    root,
    catalogFile,
    idsFile: join(root, "fixtures", "brand-ids.json"),
    reportFile: join(dirname(catalogFile), "catalog-report.txt"),
    attributionFile: join(root, "docs", "attribution.md"),
    svgoCacheFile: join(root, "build", ".svgo-cache.json"),
    renderCacheFile: join(root, "build", ".render-cache.json"),
    paintCacheFile: join(root, "build", ".paint-cache.json"),
  };
}

export type Phase = (name: string, detail: string) => void;

/** "[catalog] merge      5200 brands ... (812 ms, total 812 ms)" on stderr */
export function phaseLogger(started = performance.now()): Phase {
  let phaseStart = started;
  return (name, detail) => {
    const now = performance.now();
    console.error(
      `[catalog] ${name.padEnd(10)} ${detail} (${Math.round(now - phaseStart)} ms, total ${Math.round(now - started)} ms)`,
    );
    phaseStart = now;
  };
}

export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
