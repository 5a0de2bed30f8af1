import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { findFerretDb, findPostgres, startMongoLocal } from "../../../scripts/mongo-local";
import { describeUnless } from "../../support/skip";

/**
 * The local MongoDB-wire server the MongoDB suites and benchmarks run on (scripts/mongo-local.ts):
 * FerretDB on a throwaway PostgreSQL cluster, or on SQLite, and the command-line server.
 */
const ferret = findFerretDb();
const pg = findPostgres();
const reason = [ferret, pg].map((f) => (f as { reason?: string }).reason).find(Boolean);

/** Whether a process with this pid is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process with this pid is running (a zombie, dead but not yet reaped, is not). */
function running(pid: number): boolean {
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return stat !== "" && stat.split(") ")[1]?.[0] !== "Z";
}

/** `bun scripts/mongo-local.ts` with `env`, and the JSON line it prints (null if none). */
async function startCli(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, "scripts/mongo-local.ts"], {
    env: { ...process.env, FERRETDB_BACKEND: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  const printed = JSON.parse(out || "null") as { url: string; backend: string; dir: string } | null;
  return { proc, printed };
}

/** The command line with `env`: what it printed and stored, then SIGINT and its exit. */
async function runCli(env: Record<string, string>) {
  const { proc, printed } = await startCli(env);
  let stored: unknown[] = [];
  if (printed) {
    const client = await MongoClient.connect(printed.url);
    await client.db("cli").collection("c").insertOne({ n: 1 });
    stored = await client
      .db("cli")
      .collection("c")
      .find({}, { projection: { _id: 0 } })
      .toArray();
    await client.close();
  }
  proc.kill("SIGINT");
  return {
    printed,
    stored,
    code: await proc.exited,
    stderr: await new Response(proc.stderr).text(),
  };
}

describeUnless(reason)(
  `local MongoDB-wire server ${reason ? `(skipped: ${reason})` : ""}`.trim(),
  () => {
    test("PostgreSQL backend: FerretDB stores into a throwaway cluster; stop ends both and removes the data", async () => {
      const local = await startMongoLocal({ backend: "pg" });
      expect(local.backend).toBe("pg");
      const pidFile = readFileSync(join(local.dir, "pgdata", "postmaster.pid"), "utf8").split("\n");
      const postgresPid = Number(pidFile[0]);
      expect(pidFile[7]?.trim()).toBe("ready");
      const client = await MongoClient.connect(local.url);
      try {
        await client
          .db("local_pg")
          .collection("c")
          .insertMany([{ n: 1 }, { n: 2 }]);
        const found = await client
          .db("local_pg")
          .collection("c")
          .find({ n: { $gt: 1 } })
          .toArray();
        expect(found.map((d) => d.n)).toEqual([2]);
      } finally {
        await client.close();
      }
      expect(alive(postgresPid)).toBe(true);
      await local.stop();
      expect(alive(local.pid)).toBe(false);
      expect(alive(postgresPid)).toBe(false);
      expect(existsSync(local.dir)).toBe(false);
    });

    test("the command line serves until SIGINT; without PostgreSQL binaries it falls back to SQLite and says why", async () => {
      const fallback = await runCli({ POSTGRES_BIN_DIR: "/nonexistent" });
      expect(fallback.printed?.backend).toBe("sqlite");
      expect(fallback.stored).toEqual([{ n: 1 }]);
      expect(fallback.code).toBe(0);
      expect(fallback.stderr.trim()).toBe(
        "FerretDB on its SQLite backend: POSTGRES_BIN_DIR=/nonexistent has no initdb and postgres",
      );

      const pgCli = await runCli({});
      expect(pgCli.printed?.backend).toBe("pg");
      expect(pgCli.stored).toEqual([{ n: 1 }]);
      expect(pgCli.code).toBe(0);
    });

    test("the command line killed with SIGKILL leaves no server running", async () => {
      const { proc, printed } = await startCli({});
      expect(printed?.backend).toBe("pg");
      const dir = printed?.dir as string;
      const postgresPid = Number(
        readFileSync(join(dir, "pgdata", "postmaster.pid"), "utf8").split("\n")[0],
      );
      expect(running(postgresPid)).toBe(true);
      proc.kill("SIGKILL");
      await proc.exited;
      const until = Date.now() + 5000;
      while (running(postgresPid) && Date.now() < until) await Bun.sleep(50);
      expect(running(postgresPid)).toBe(false);
      const client = new MongoClient(printed?.url as string, { serverSelectionTimeoutMS: 1000 });
      await expect(client.connect()).rejects.toThrow();
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test("asking for PostgreSQL without its binaries, or for an unknown backend, fails with the reason", async () => {
      const noPg = await runCli({ FERRETDB_BACKEND: "pg", POSTGRES_BIN_DIR: "/nonexistent" });
      expect(noPg.printed).toBeNull();
      expect(noPg.code).not.toBe(0);
      expect(noPg.stderr).toContain(
        "FERRETDB_BACKEND=pg: POSTGRES_BIN_DIR=/nonexistent has no initdb and postgres",
      );
      const unknown = await runCli({ FERRETDB_BACKEND: "mysql" });
      expect(unknown.printed).toBeNull();
      expect(unknown.stderr).toContain("FERRETDB_BACKEND=mysql: expected pg or sqlite");
    });
  },
);
