import { createApp } from "./app";
import { type Config, ConfigError, loadConfig } from "./config";
import { buildDeps, type Deps } from "./deps";
import type { Listener } from "./http/drain";
import { log, setLogLevel } from "./platform/log";
import { storageCode } from "./store/embedded/db";
import { DataDirLocked } from "./store/lock";

/**
 * Shared start-up for every runtime: config, stores, catalog, app. Exits with one log line on a
 * bad config or a database it cannot open (corrupt, read-only, full, locked by another process).
 */
export async function boot(env: Record<string, string | undefined>) {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  setLogLevel(config.LOG_LEVEL);
  const started = performance.now();
  let deps: Deps;
  try {
    deps = await buildDeps(config);
  } catch (err) {
    if (err instanceof DataDirLocked) {
      log("error", "cannot start: another service process uses DATA_DIR", {
        error: err.message,
      });
      process.exit(1);
    }
    const code = storageCode(err);
    if (!code) throw err;
    log("error", "cannot start: the database refused", { code, error: (err as Error).message });
    process.exit(1);
  }
  deps.catalog.watch(30_000);
  const app = createApp(deps);
  log("info", "catalog loaded", {
    brands: deps.catalog.size,
    version: deps.catalog.version,
    store: deps.store.kind,
    ms: Math.round(performance.now() - started),
  });
  return { config, deps, app };
}

/** The start-up banner: a JSON log line like every other (LOG_LEVEL=info or lower shows it). */
export function announce(config: Config, deps?: Pick<Deps, "startReplay">) {
  // ready: usage events spilled by an earlier process are replayed in the background now
  deps?.startReplay();
  const base = `http://localhost:${config.PORT}`;
  log("info", "Brand Asset API listening", {
    url: base,
    docs: `${base}/swagger`,
    openapi: `${base}/swagger/json`,
    logRequests: config.LOG_REQUESTS,
  });
}

/**
 * Graceful stop on SIGTERM or SIGINT (src/http/drain.ts): /readyz 503 at once, the listener
 * closed, in-flight requests finished and keep-alive connections closed after their answer
 * (within SHUTDOWN_GRACE_MS), buffers flushed and stores closed, then exit.
 */
export function onShutdown(listener: Listener, deps: Deps) {
  const handler = async (signal: string) => {
    if (deps.drain.draining) return;
    log("info", "shutting down", { signal, graceMs: deps.config.SHUTDOWN_GRACE_MS });
    try {
      await deps.drain.run(listener, deps.config.SHUTDOWN_GRACE_MS, () => deps.close());
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void handler("SIGTERM"));
  process.on("SIGINT", () => void handler("SIGINT"));
}
