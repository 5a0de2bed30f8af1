/**
 * A local MongoDB-wire server for tests, benchmarks and trying the MongoDB store without a
 * MongoDB install: FerretDB v1 with its SQLite backend (no other server needed), on 127.0.0.1,
 * data in a temp dir that is removed on stop.
 *
 * The binary is found at FERRETDB_BIN, else ~/.cache/brand-api/bin/ferretdb (where
 * `.ci/mongo.sh` builds it), else `ferretdb` on PATH. Build it with `bash .ci/mongo.sh`.
 *
 * Run: `bun scripts/mongo-local.ts` (MONGO_LOCAL_PORT, default a free port) prints
 * `{"url":"mongodb://127.0.0.1:<port>/"}` and serves until Ctrl-C / SIGTERM.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./lib/net";

export interface MongoLocal {
  /** mongodb:// URL of the server */
  url: string;
  port: number;
  pid: number;
  /** stop the server (SIGTERM, then SIGKILL) and remove its data dir */
  stop(): Promise<void>;
}

/** Where the FerretDB binary is, or null with the places looked at. */
export function findFerretDb(): { bin: string } | { bin: null; reason: string } {
  const env = process.env.FERRETDB_BIN;
  if (env) {
    return existsSync(env)
      ? { bin: env }
      : { bin: null, reason: `FERRETDB_BIN=${env} does not exist` };
  }
  const cached = join(homedir(), ".cache/brand-api/bin/ferretdb");
  if (existsSync(cached)) return { bin: cached };
  const onPath = Bun.which("ferretdb");
  if (onPath) return { bin: onPath };
  return {
    bin: null,
    reason: `no FerretDB binary (looked at FERRETDB_BIN, ${cached}, PATH); build it with: bash .ci/mongo.sh`,
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: "127.0.0.1" }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** Start FerretDB (SQLite backend) on a loopback port; resolves once it accepts connections. */
export async function startMongoLocal(opts: { port?: number; bin?: string } = {}) {
  const found = opts.bin ? { bin: opts.bin } : findFerretDb();
  if (!found.bin) throw new Error((found as { reason: string }).reason);
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "bapi-ferretdb-"));
  const proc = Bun.spawn(
    [
      found.bin,
      "--handler=sqlite",
      `--sqlite-url=file:${dir}/`,
      `--state-dir=${dir}`,
      `--listen-addr=127.0.0.1:${port}`,
      "--debug-addr=-",
      "--telemetry=disable",
      "--log-level=ERROR",
    ],
    { stdout: "ignore", stderr: Bun.file(join(dir, "ferretdb.log")) },
  );
  const until = Date.now() + 15_000;
  while (!(await answers(port))) {
    if (proc.exitCode !== null || Date.now() > until) {
      proc.kill("SIGKILL");
      const err = await Bun.file(join(dir, "ferretdb.log"))
        .text()
        .catch(() => "");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`FerretDB did not start on port ${port}: ${err.trim().slice(0, 500)}`);
    }
    await Bun.sleep(50);
  }
  // never outlive the process that started it
  const orphan = () => proc.kill("SIGKILL");
  process.once("exit", orphan);
  let stopped: Promise<void> | null = null;
  const local: MongoLocal = {
    url: `mongodb://127.0.0.1:${port}/`,
    port,
    pid: proc.pid,
    stop() {
      stopped ??= (async () => {
        process.off("exit", orphan);
        proc.kill("SIGTERM");
        const killer = setTimeout(() => proc.kill("SIGKILL"), 3000);
        await proc.exited;
        clearTimeout(killer);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
  return local;
}

if (import.meta.main) {
  const port = process.env.MONGO_LOCAL_PORT ? Number(process.env.MONGO_LOCAL_PORT) : undefined;
  const local = await startMongoLocal({ port });
  console.log(JSON.stringify({ url: local.url }));
  const stop = async () => {
    await local.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}
