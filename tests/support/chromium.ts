/**
 * Debian's Chromium for the browser tests, driven by playwright-core (no browser download):
 * CHROMIUM_PATH or /usr/bin/chromium, headless with the flags CI uses. `npm test` starts one
 * browser server for the run (scripts/test.ts, TEST_CHROMIUM_WS) and each file connects to it;
 * a file run on its own launches its own. Test files skip with a one-line reason when it is absent.
 */
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../../scripts/test";
import { rememberClientAddress } from "../../src/http/client-ip";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** A browser: the run's shared one, or a new one. `close()` ends this file's use of it. */
export function launchChromium(): Promise<Browser> {
  const ws = process.env.TEST_CHROMIUM_WS;
  if (ws) return chromium.connect(ws);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** The test app on a real loopback port (client IPs recorded), for a browser to open. */
export function serveForBrowser(app: { handle(req: Request): Response | Promise<Response> }): {
  server: ReturnType<typeof Bun.serve>;
  base: string;
} {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => {
      rememberClientAddress(req, srv.requestIP(req)?.address);
      return app.handle(req);
    },
  });
  return { server, base: `http://127.0.0.1:${server.port}` };
}
