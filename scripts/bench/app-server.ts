/**
 * Child process for scripts/bench/servers.ts (startApp): the real app (real catalog, embedded store in a
 * temp DATA_DIR) listening on a free port, plus one fresh API key. Prints one JSON line
 * `{ url, key }` on stdout, then serves until SIGTERM/SIGINT.
 * Env: BENCH_TIER (default internal), BENCH_RENDER_WORKERS (render pool size, 0 = inline),
 * BENCH_USAGE_LOG=off (a no-op usage recorder), plus any of the app's own variables.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { createRenderer } from "../../src/assets/render-pool";
import { AssetService } from "../../src/assets/service";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { rememberClientAddress } from "../../src/http/client-ip";
import { TIERS, type Tier } from "../../src/quota/limits";
import { noopRecorder } from "../../src/usage/log/recorder";

const dataDir = mkdtempSync(join(tmpdir(), "bench-"));
const config = loadConfig({ LOG_LEVEL: "error", ...process.env, DATA_DIR: dataDir, PORT: "0" });
const deps = await buildDeps(config);
// BENCH_RENDER_WORKERS=n: render pool size for asset benchmarks (0 renders on the request thread)
if (process.env.BENCH_RENDER_WORKERS !== undefined) {
  await deps.assets.close();
  deps.assets = new AssetService(
    deps.catalog,
    createRenderer({ workers: Number(process.env.BENCH_RENDER_WORKERS) }),
    deps.assets.cache,
  );
}
// the replaced recorder has nothing buffered and no timer armed: nothing to close
if (process.env.BENCH_USAGE_LOG === "off") deps.usage = noopRecorder;
const app = createApp(deps);
// as src/main.ts serves it: the socket address handed to the app, the drain in front
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req, srv) => {
    rememberClientAddress(req, srv.requestIP(req)?.address);
    return deps.drain.respond(req, app.fetch);
  },
});
const tier = (process.env.BENCH_TIER ?? "internal") as Tier;
if (!TIERS.includes(tier)) throw new Error(`BENCH_TIER must be one of ${TIERS.join(", ")}`);
const { apiKey } = await deps.accounts.createAccountWithKey({ tier });
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, key: apiKey }));

async function stop() {
  server.stop(true);
  await deps.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
