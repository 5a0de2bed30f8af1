/**
 * Render worker (a web-standard Worker, started by render-pool.ts on platform/thread-pool.ts):
 * renders one job per message at a lower thread priority and posts the bytes back
 * (transferred, not copied).
 */
import { serveThreadJobs } from "../platform/thread-pool";
import type { RenderFormat } from "./render";
import { type Layout, renderRaster } from "./render";

export interface RenderRequest {
  svg: string;
  size: number;
  format: RenderFormat;
  layout?: Layout;
}

serveThreadJobs<RenderRequest, Uint8Array>(
  ({ svg, size, format, layout }) => renderRaster(svg, size, format, layout),
  { background: true, transfer: (bytes) => [bytes.buffer as ArrayBuffer] },
);
