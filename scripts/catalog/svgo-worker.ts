/** Worker thread: sanitize + optimize batches of SVGs with svgo (see optimize.ts). */
import { sanitizeAndOptimizeSvg } from "../../src/catalog/sanitize";
import { ID_TOKEN } from "./optimize-shared";

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ batch: [string, string, boolean][] }>) => {
  const results: [string, string | null][] = event.data.batch.map(([key, svg, paths]) => {
    try {
      return [key, sanitizeAndOptimizeSvg(svg, ID_TOKEN, { paths })];
    } catch {
      return [key, null];
    }
  });
  self.postMessage({ results });
};
