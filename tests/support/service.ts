/**
 * The service as a real process on loopback, for the tests that restart it, signal it or run
 * another entry point (Deno, the bundle): `npm start`'s command by default, over `dataDir`, on
 * the small real catalog unless `env` names another, answering /healthz before it returns.
 * The caller stops it (`proc.kill`).
 */
import { join } from "node:path";
import { ADMIN_TOKEN, freePort, SERVICE_CMD, waitForHealth } from "./app";
import { smallCatalogFile } from "./catalog";

const ROOT = join(import.meta.dir, "../..");

export interface ServiceProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  port: number;
  proc: ReturnType<typeof Bun.spawn>;
}

export async function startService(opts: {
  dataDir: string;
  cmd?: string[];
  env?: Record<string, string>;
  port?: number;
  stdout?: "ignore" | "pipe";
  stderr?: "pipe" | "inherit";
  /** how long it may take to answer /healthz */
  readyMs?: number;
}): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const proc = Bun.spawn(opts.cmd ?? SERVICE_CMD, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: opts.dataDir,
      CATALOG_FILE: smallCatalogFile(),
      ADMIN_TOKEN,
      LOG_LEVEL: "error",
      ...opts.env,
    },
    stdout: opts.stdout ?? "ignore",
    stderr: opts.stderr ?? "pipe",
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base, opts.readyMs ?? 60_000);
  return { base, port, proc };
}

/** A new account and key on a running service, through POST /admin/keys (201 or it throws). */
export async function adminKey(
  base: string,
  tier = "free",
): Promise<{ accountId: string; keyId: string; apiKey: string }> {
  const r = await fetch(`${base}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier }),
  });
  if (r.status !== 201) throw new Error(`POST /admin/keys answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as { accountId: string; keyId: string; apiKey: string };
}
