import { RUNTIME_BODY_LIMIT } from "./http/auth";
import { rememberClientAddress } from "./http/client-ip";
import { announce, boot, onShutdown } from "./server";

/** Bun entry point. The socket address is handed to the app for per-IP limits. */
const { config, deps, app } = await boot(process.env);
const server = Bun.serve({
  port: config.PORT,
  hostname: config.HOST,
  // a backstop for bodies sent without Content-Length (the routes answer a JSON 413 past
  // 64 KiB; past this the runtime answers 413 itself, with an empty body)
  maxRequestBodySize: RUNTIME_BODY_LIMIT,
  fetch: (req, srv) => {
    rememberClientAddress(req, srv.requestIP(req)?.address);
    return app.fetch(req);
  },
});
announce({ ...config, PORT: server.port ?? config.PORT });
onShutdown(() => server.stop(), deps);
