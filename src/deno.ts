import process from "node:process";
import { rememberClientAddress } from "./http/client-ip";
import { announce, boot, onShutdown } from "./server";

declare const Deno: {
  serve(
    opts: { port: number; hostname: string; onListen?: (a: { port: number }) => void },
    handler: (
      req: Request,
      info: { remoteAddr: { hostname: string } },
    ) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; addr: { port: number } };
};

/** Deno entry point: the same app as a web-standard fetch handler (plus the peer address). */
const { config, deps, app } = await boot(process.env);
const server = Deno.serve(
  {
    port: config.PORT,
    hostname: config.HOST,
    onListen: ({ port }) => announce({ ...config, PORT: port }, deps),
  },
  (req, info) => {
    rememberClientAddress(req, info.remoteAddr.hostname);
    return deps.drain.respond(req, app.fetch);
  },
);
// Deno's shutdown() is graceful already (in-flight requests finish); after the grace period
// the process exits with whatever is left
onShutdown({ stop: () => server.shutdown(), forceStop: () => {} }, deps);
