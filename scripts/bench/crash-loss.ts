/**
 * How many usage events a `kill -9` loses, as events and as milliseconds of traffic.
 *
 *   bun scripts/bench/crash-loss.ts [--duration 4] [--connections 32,256] [--rounds 2] [--durability strict]
 *
 * Per round: the real server (src/main.ts, embedded store, in-memory counters) in a child
 * process with its own DATA_DIR; `connections` concurrent clients send GET /v1/catalog/{slug}
 * with an internal key for `seconds`, then the server is killed with SIGKILL while under load.
 * A metered request's event is recorded before its answer is handed back, so every answer a
 * client received is an event the server had. Lost = answers received - distinct event ids on
 * disk (the day files and the spill files). Also printed as time: lost / answers per ms.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadArgs } from "./args";
import { removeTempDir, tempDir } from "./servers";
import { fmt } from "./stats";

const {
  duration: seconds,
  connectionSets,
  rounds,
  values,
} = loadArgs(
  { duration: 4, connections: [32, 256], rounds: 2 },
  { durability: { type: "string", default: "batched" } },
);
const ADMIN = "crash-loss-admin-token-0123456789";

async function startServer(dataDir: string) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = Bun.spawn([process.execPath, "--max-http-header-size=131072", "src/main.ts"], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      ADMIN_TOKEN: ADMIN,
      USAGE_DURABILITY: String(values.durability),
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {}
    await Bun.sleep(100);
  }
  const r = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier: "internal" }),
  });
  if (!r.ok) throw new Error(`could not create a key: ${r.status}`);
  const { apiKey } = (await r.json()) as { apiKey: string };
  return { proc, url, apiKey };
}

function idsOnDisk(dataDir: string): Set<string> {
  const ids = new Set<string>();
  for (const sub of ["events", "spill"]) {
    let names: string[] = [];
    try {
      names = readdirSync(join(dataDir, sub)).filter((n) => n.endsWith(".jsonl"));
    } catch {}
    for (const n of names)
      for (const line of readFileSync(join(dataDir, sub, n), "utf8").split("\n")) {
        const m = /"id":"([^"]+)"/.exec(line);
        if (m?.[1] && line.includes('"bucket"')) ids.add(m[1]);
      }
  }
  return ids;
}

async function round(connections: number) {
  const dataDir = tempDir("crash-loss-");
  const { proc, url, apiKey } = await startServer(dataDir);
  let answered = 0;
  let running = true;
  const started = performance.now();
  const client = async () => {
    while (running) {
      try {
        const r = await fetch(`${url}/v1/catalog/github`, { headers: { "x-api-key": apiKey } });
        await r.arrayBuffer();
        if (running && r.status === 200) answered++;
      } catch {
        return;
      }
    }
  };
  const clients = Array.from({ length: connections }, client);
  await Bun.sleep(seconds * 1000);
  proc.kill("SIGKILL");
  const counted = answered;
  const elapsed = performance.now() - started;
  running = false;
  await proc.exited;
  await Promise.all(clients);
  const stored = idsOnDisk(dataDir).size;
  removeTempDir(dataDir);
  const lost = Math.max(0, counted - stored);
  const perMs = counted / elapsed;
  return { connections, answered: counted, stored, lost, lostMs: lost / perMs, rps: perMs * 1000 };
}

console.log(
  `kill -9 under load: ${seconds} s of GET /v1/catalog/github per round, ${rounds} round(s) per connection count`,
);
console.log("connections  req/s    answered  on disk   lost  lost as traffic time");
for (const c of connectionSets)
  for (let i = 0; i < rounds; i++) {
    const r = await round(c);
    console.log(
      `${String(c).padStart(11)}  ${fmt(r.rps, 0).padStart(6)}  ${String(r.answered).padStart(8)}  ${String(r.stored).padStart(8)}  ${String(r.lost).padStart(5)}  ${fmt(r.lostMs, 0)} ms`,
    );
  }
