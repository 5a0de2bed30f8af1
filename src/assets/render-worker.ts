/**
 * Render worker (a web-standard Worker, started by render-pool.ts): renders one job per
 * message and posts the bytes back (transferred, not copied).
 */
import type { RenderFormat } from "./model";
import { renderRaster } from "./render";

export interface RenderRequest {
  id: number;
  svg: string;
  size: number;
  format: RenderFormat;
}

export type RenderReply = { id: number; bytes: Uint8Array } | { id: number; error: string };

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<RenderRequest>) => void) | null;
  postMessage(message: RenderReply, transfer?: Transferable[]): void;
};

scope.onmessage = async (event) => {
  const { id, svg, size, format } = event.data;
  try {
    const bytes = await renderRaster(svg, size, format);
    scope.postMessage({ id, bytes }, [bytes.buffer as ArrayBuffer]);
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
