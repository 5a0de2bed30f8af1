#!/usr/bin/env bun
/**
 * Prints the OpenAPI document the app serves at /swagger/json (for linters and client
 * generators), built in-process over a throwaway DATA_DIR: `bun scripts/openapi.ts > openapi.json`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { buildDeps } from "../src/deps";
import { setLogLevel } from "../src/platform/log";

const dataDir = mkdtempSync(join(tmpdir(), "bapi-openapi-"));
try {
  setLogLevel("error");
  // ADMIN_TOKEN and METRICS_TOKEN set so the operator routes are part of the document
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: "x".repeat(32),
    METRICS_TOKEN: "x".repeat(32),
  });
  const deps = await buildDeps(config);
  const res = await createApp(deps).handle(new Request("http://localhost/swagger/json"));
  process.stdout.write(`${JSON.stringify(await res.json(), null, 2)}\n`);
  await deps.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
