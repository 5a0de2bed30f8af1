import { maxHeaderSize } from "node:http";
import { RUNTIME_BODY_LIMIT } from "./http/body-limits";
import { rememberClientAddress } from "./http/client-ip";
import { RUNTIME_HEADER_LIMIT } from "./http/request-limits";
import { log } from "./platform/log";
import { announce, boot, onShutdown } from "./server";

/** Bun entry point. The socket address is handed to the app for per-IP limits. */
const { config, deps, app } = await boot(process.env);
const server = Bun.serve({
  port: config.PORT,
  hostname: config.HOST,
  // a backstop for bodies sent without Content-Length (the routes answer a JSON 413 past
  // 64 KiB; past this the runtime answers 413 itself, with an empty body)
  maxRequestBodySize: RUNTIME_BODY_LIMIT,
  // GET /v1/brand?wait= may answer up to 10 s after the request: past Bun's default 10 s
  idleTimeout: 30,
  fetch: (req, srv) => {
    rememberClientAddress(req, srv.requestIP(req)?.address);
    return deps.drain.respond(req, app.fetch);
  },
});
announce({ ...config, PORT: server.port ?? config.PORT }, deps);
if (maxHeaderSize < RUNTIME_HEADER_LIMIT)
  log("warn", "the runtime refuses URLs and headers over its own limit with an empty 431", {
    maxHeaderSize,
    fix: `start with bun --max-http-header-size=${RUNTIME_HEADER_LIMIT} (npm start does)`,
  });
onShutdown(
  {
    stop: () => server.stop(),
    forceStop: () => server.stop(true),
    pending: () => server.pendingRequests,
  },
  deps,
);
