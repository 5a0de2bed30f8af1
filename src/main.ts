import { rememberClientAddress } from "./http/client-ip";
import { announce, boot, onShutdown } from "./server";

/** Bun entry point. The socket address is handed to the app for per-IP limits. */
const { config, deps, app } = await boot(process.env);
const server = Bun.serve({
  port: config.PORT,
  hostname: config.HOST,
  // a backstop for bodies sent without Content-Length (the routes answer 413 past 64 KiB)
  maxRequestBodySize: 1024 * 1024,
  fetch: (req, srv) => {
    rememberClientAddress(req, srv.requestIP(req)?.address);
    return app.fetch(req);
  },
});
announce({ ...config, PORT: server.port ?? config.PORT });
onShutdown(() => server.stop(), deps);
