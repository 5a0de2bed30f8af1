/**
 * Artwork worker (a web-standard Worker started by artwork-pool.ts on platform/thread-pool.ts):
 * turns fetched image bytes into storable artwork (svgo, resvg, sharp) and derives enrichment
 * records (svgo) off the request thread, one job per message, at a lower thread priority on
 * Linux like the render workers.
 */
import { serveThreadJobs } from "../../platform/thread-pool";
import { runWorkerJob } from "./artwork";

serveThreadJobs(runWorkerJob, { background: true });
