import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

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
