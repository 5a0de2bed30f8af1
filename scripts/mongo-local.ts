/**
 * A local MongoDB-wire server for tests, benchmarks and trying the MongoDB store without a
 * MongoDB install: FerretDB v1 on 127.0.0.1, with its data in a temp dir removed on stop.
 *
 * Backend (FERRETDB_BACKEND): `pg` (the default) starts a throwaway PostgreSQL cluster for
 * FerretDB (initdb into the temp dir, `postgres` on a unix socket there, no TCP port); `sqlite`
 * needs no other server. Without PostgreSQL server binaries the default falls back to SQLite and
 * says why, once. Debian's `postgresql` package has them (`bash .ci/postgres.sh`).
 *
 * The FerretDB binary is found at FERRETDB_BIN, else ~/.cache/brand-api/bin/ferretdb (where
 * `.ci/mongo.sh` builds it), else `ferretdb` on PATH. Build it with `bash .ci/mongo.sh`.
 *
 * Run: `bun scripts/mongo-local.ts` (MONGO_LOCAL_PORT, default a free port) prints
 * `{"url":"mongodb://127.0.0.1:<port>/","backend":"pg","dir":...}` and serves until Ctrl-C /
 * SIGTERM. Where setpriv (util-linux) is found, the servers also end when this process is killed.
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "./lib/net";

export type FerretBackend = "pg" | "sqlite";

export interface MongoLocal {
  /** mongodb:// URL of the server */
  url: string;
  port: number;
  pid: number;
  backend: FerretBackend;
  /** the temp dir holding FerretDB's and PostgreSQL's data, removed by stop() */
  dir: string;
  /** stop the server (SIGTERM, then SIGKILL), its PostgreSQL cluster, and remove their data */
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

/**
 * The directory holding PostgreSQL's `initdb` and `postgres`: POSTGRES_BIN_DIR, else Debian's
 * /usr/lib/postgresql/<newest version>/bin, else the one of `initdb` on PATH.
 */
export function findPostgres(): { dir: string } | { dir: null; reason: string } {
  const has = (dir: string) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"));
  const env = process.env.POSTGRES_BIN_DIR;
  if (env) {
    return has(env)
      ? { dir: env }
      : { dir: null, reason: `POSTGRES_BIN_DIR=${env} has no initdb and postgres` };
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => has(join(root, v, "bin")))
        .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    : [];
  if (versions[0]) return { dir: join(root, versions[0], "bin") };
  const initdb = Bun.which("initdb");
  if (initdb && has(dirname(initdb))) return { dir: dirname(initdb) };
  return {
    dir: null,
    reason: `no PostgreSQL server binaries (looked at POSTGRES_BIN_DIR, ${root}/*/bin, PATH); install them with: bash .ci/postgres.sh`,
  };
}

let fallbackNoted = false;

/** The backend asked for, or PostgreSQL when found, else SQLite (noted once). */
function chooseBackend(
  asked: string | undefined,
): { backend: "sqlite" } | { backend: "pg"; pgBin: string } {
  if (asked === "sqlite") return { backend: "sqlite" };
  if (asked !== undefined && asked !== "pg" && asked !== "") {
    throw new Error(`FERRETDB_BACKEND=${asked}: expected pg or sqlite`);
  }
  const pg = findPostgres();
  if (pg.dir) return { backend: "pg", pgBin: pg.dir };
  const reason = (pg as { reason: string }).reason;
  if (asked === "pg") throw new Error(`FERRETDB_BACKEND=pg: ${reason}`);
  if (!fallbackNoted) {
    fallbackNoted = true;
    console.warn(`FerretDB on its SQLite backend: ${reason}`);
  }
  return { backend: "sqlite" };
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

/** A file's text, or "" while it does not exist. */
const readText = (file: string): Promise<string> =>
  Bun.file(file)
    .text()
    .catch(() => "");

/** Polls `ready` until it holds; throws with the log's tail when `proc` exits or 15 s pass. */
async function waitFor(what: string, proc: Subprocess, log: string, ready: () => Promise<boolean>) {
  const until = Date.now() + 15_000;
  while (!(await ready())) {
    if (proc.exitCode !== null || Date.now() > until) {
      throw new Error(`${what} did not start: ${(await readText(log)).trim().slice(-500)}`);
    }
    await Bun.sleep(20);
  }
}

/** Signals `proc`, then SIGKILL after 3 s; resolves when it has exited. */
async function terminate(proc: Subprocess, signal: NodeJS.Signals): Promise<void> {
  proc.kill(signal);
  const killer = setTimeout(() => proc.kill("SIGKILL"), 3000);
  await proc.exited;
  clearTimeout(killer);
}

/**
 * The command prefix for a server this process starts: with setpriv (util-linux), the server gets
 * `signal` when this process dies, so a killed run leaves no server behind; `user` runs it as
 * that OS user (as root). setpriv execs the program, so the spawned pid is the server's.
 */
function serverPrefix(signal: NodeJS.Signals, user?: string): string[] {
  const setpriv = Bun.which("setpriv");
  if (!setpriv) {
    if (user) throw new Error(`running as root: setpriv (util-linux) is needed to run as ${user}`);
    return [];
  }
  const as = user ? [`--reuid=${user}`, `--regid=${user}`, "--init-groups"] : [];
  return [setpriv, ...as, `--pdeathsig=${signal}`, "--"];
}

/**
 * PostgreSQL's programs refuse to run as root: as root, they run as the `postgres` OS user
 * (Debian's package creates it), and `dir` is handed to that user.
 */
function postgresUser(dir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  if (!entry) throw new Error("running as root and there is no postgres OS user to run PostgreSQL");
  const [, , uid, gid] = entry.split(":");
  chownSync(dir, Number(uid), Number(gid));
  return "postgres";
}

/**
 * A throwaway PostgreSQL cluster in `dir`, listening only on a unix socket in `dir`; resolves
 * with its connection URL once it accepts connections.
 */
async function startPostgres(pgBin: string, dir: string) {
  // SIGQUIT: PostgreSQL's immediate shutdown, which also ends its backends
  const as = serverPrefix("SIGQUIT", postgresUser(dir));
  const data = join(dir, "pgdata");
  const log = join(dir, "postgres.log");
  const initdb = Bun.spawn(
    [
      ...as,
      join(pgBin, "initdb"),
      `--pgdata=${data}`,
      "--username=postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
    ],
    { cwd: dir, stdout: Bun.file(join(dir, "initdb.log")), stderr: "pipe" },
  );
  if ((await initdb.exited) !== 0) {
    throw new Error(`initdb failed: ${(await new Response(initdb.stderr).text()).trim()}`);
  }
  const proc = Bun.spawn(
    [
      ...as,
      join(pgBin, "postgres"),
      `-D${data}`,
      `-k${dir}`,
      "-clisten_addresses=",
      // a test server whose data is thrown away: no crash safety, so no waiting for the disk
      "-cfsync=off",
      "-csynchronous_commit=off",
      "-cfull_page_writes=off",
    ],
    { cwd: dir, stdout: "ignore", stderr: Bun.file(log) },
  );
  // the postmaster writes "ready" on the 8th line of postmaster.pid once it accepts connections
  const pidFile = join(data, "postmaster.pid");
  const ready = async () => (await readText(pidFile)).split("\n")[7]?.trim() === "ready";
  try {
    await waitFor("PostgreSQL", proc, log, ready);
  } catch (err) {
    proc.kill("SIGKILL");
    throw err;
  }
  return { proc, url: `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}` };
}

/**
 * Start FerretDB on a loopback port, on `opts.backend`, else FERRETDB_BACKEND's, else PostgreSQL
 * when found, else SQLite; resolves once it accepts connections.
 */
export async function startMongoLocal(
  opts: { port?: number; bin?: string; backend?: FerretBackend } = {},
) {
  const found = opts.bin ? { bin: opts.bin } : findFerretDb();
  if (!found.bin) throw new Error((found as { reason: string }).reason);
  const choice = chooseBackend(opts.backend ?? process.env.FERRETDB_BACKEND);
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "bapi-ferretdb-"));
  const log = join(dir, "ferretdb.log");
  let pg: Subprocess | null = null;
  let proc: Subprocess | null = null;
  try {
    let backendArgs = ["--handler=sqlite", `--sqlite-url=file:${dir}/`];
    if (choice.backend === "pg") {
      const cluster = await startPostgres(choice.pgBin, dir);
      pg = cluster.proc;
      backendArgs = ["--handler=pg", `--postgresql-url=${cluster.url}`];
    }
    proc = Bun.spawn(
      [
        ...serverPrefix("SIGTERM"),
        found.bin,
        ...backendArgs,
        `--state-dir=${dir}`,
        `--listen-addr=127.0.0.1:${port}`,
        "--debug-addr=-",
        "--telemetry=disable",
        "--log-level=ERROR",
      ],
      { stdout: "ignore", stderr: Bun.file(log) },
    );
    await waitFor(`FerretDB on port ${port}`, proc, log, () => answers(port));
  } catch (err) {
    proc?.kill("SIGKILL");
    if (pg) await terminate(pg, "SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const ferret = proc;
  const postgres = pg;
  // never outlive the process that started it, also where setpriv is missing
  const orphan = () => {
    ferret.kill("SIGKILL");
    postgres?.kill("SIGQUIT");
  };
  process.once("exit", orphan);
  let stopped: Promise<void> | null = null;
  const local: MongoLocal = {
    url: `mongodb://127.0.0.1:${port}/`,
    port,
    pid: ferret.pid,
    backend: choice.backend,
    dir,
    stop() {
      stopped ??= (async () => {
        process.off("exit", orphan);
        await terminate(ferret, "SIGTERM");
        // the data is thrown away, so the immediate shutdown
        if (postgres) await terminate(postgres, "SIGQUIT");
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
  console.log(JSON.stringify({ url: local.url, backend: local.backend, dir: local.dir }));
  const stop = async () => {
    await local.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}
