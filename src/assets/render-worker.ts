/**
 * Render worker (a web-standard Worker, started by render-pool.ts): renders one job per
 * message and posts the bytes back (transferred, not copied).
 */
import { setPriority } from "node:os";
import process from "node:process";
import { WORKER_NICE } from "../platform/worker-script";
import type { RenderFormat } from "./render";
import { type Layout, renderRaster } from "./render";

export interface RenderRequest {
  id: number;
  svg: string;
  size: number;
  format: RenderFormat;
  layout?: Layout;
}

export type RenderReply = { id: number; bytes: Uint8Array } | { id: number; error: string };

// Renders are background work: on Linux the nice value is per thread, so lowering it here
// leaves the request thread at full priority when cores are busy (elsewhere it would apply to
// the whole process, so it is skipped).
if (process.platform === "linux") {
  try {
    setPriority(WORKER_NICE);
  } catch {}
}

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<RenderRequest>) => void) | null;
  postMessage(message: RenderReply, transfer?: Transferable[]): void;
};

scope.onmessage = async (event) => {
  const { id, svg, size, format, layout } = event.data;
  try {
    const bytes = await renderRaster(svg, size, format, layout);
    scope.postMessage({ id, bytes }, [bytes.buffer as ArrayBuffer]);
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
