/**
 * Artwork worker (a web-standard Worker started by artwork-pool.ts): turns fetched image bytes
 * into storable artwork (svgo, resvg, sharp) off the request thread, one job per message, at a
 * lower thread priority on Linux like the render workers.
 */
import { setPriority } from "node:os";
import process from "node:process";
import { RENDER_NICE } from "../../assets/model";
import { type ArtworkJob, type ArtworkReply, processArtwork } from "./artwork";

if (process.platform === "linux") {
  try {
    setPriority(RENDER_NICE);
  } catch {}
}

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<ArtworkJob & { id: number }>) => void) | null;
  postMessage(message: ArtworkReply & { id: number }): void;
};

scope.onmessage = async (event) => {
  const { id, ...job } = event.data;
  try {
    scope.postMessage({ id, artwork: await processArtwork(job) });
  } catch (err) {
    scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
