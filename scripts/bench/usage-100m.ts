#!/usr/bin/env bun
/**
 * The embedded usage log at scale: --events usage events (usage-gen.ts) over the 366 days
 * ending now across --accounts accounts, one of them (the measured one) with --share of them.
 *
 *  1. Seed (skipped when --dir holds a seeded database): the app's store opened on --dir, the
 *     events appended through the usage write thread's batch append (`append`, batches of
 *     --batch, as the service's recorder sends them), the next batch made while the thread
 *     writes one. Prints ingest events/s as it goes, then the disk bytes per event (database
 *     file + WAL).
 *  2. Serve: the app in a child process (this script with --serve) on the seeded --dir, the
 *     measured account's dashboard queries over HTTP (--reads calls each after a first one),
 *     then the child's RSS (settled: a second after the last query); then the account's export
 *     (NDJSON, pages of 50,000): events/s and the child's RSS before and after.
 *  The child's per-minute analytics caps run on a clock that moves a minute per call.
 *
 *   bun scripts/bench/usage-100m.ts [--events 10000000] [--accounts 1000] [--share 0.02]
 *     [--batch 20000] [--reads 20] [--dir /work/bench-data/topk-usage]
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { buildDeps } from "../../src/deps";
import { DB_FILE } from "../../src/store/embedded/db";
import { fmt } from "./stats";
import { DAY_MS, exportAll, serveUncapped, timeQueries, usageBatches } from "./usage-gen";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "10000000" },
    accounts: { type: "string", default: "1000" },
    share: { type: "string", default: "0.02" },
    batch: { type: "string", default: "20000" },
    reads: { type: "string", default: "20" },
    dir: { type: "string", default: "/work/bench-data/topk-usage" },
    serve: { type: "boolean", default: false },
  },
});
const DIR = values.dir as string;
const env = {
  LOG_LEVEL: "error",
  LOG_REQUESTS: "off",
  DATA_DIR: DIR,
  USAGE_RETENTION_DAYS: "400",
  USAGE_EXPORT_SETTLE_MS: "0",
};

if (values.serve) {
  // the child: the app on the seeded DATA_DIR
  const deps = await buildDeps(loadConfig(env));
  const app = serveUncapped(deps);
  console.log(JSON.stringify({ url: `http://127.0.0.1:${app.server?.port}` }));
  const stop = async () => {
    await app.stop();
    await deps.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
} else await main();

function diskBytes(): number {
  const db = join(DIR, DB_FILE);
  let n = 0;
  for (const f of [db, `${db}-wal`]) if (existsSync(f)) n += statSync(f).size;
  return n;
}

async function seed(): Promise<{ apiKey: string }> {
  const EVENTS = Number(values.events);
  const now = Date.now();
  const from = now - 365 * DAY_MS - (now % DAY_MS);
  const deps = await buildDeps(loadConfig(env));
  const { accountId, keyId, apiKey } = await deps.accounts.createAccountWithKey({ tier: "pro" });
  const started = performance.now();
  let done = 0;
  let shown = 0;
  let writing: Promise<number> | null = null;
  for (const batch of usageBatches({
    accountId,
    keys: [keyId, "key-b", "key-c", "key-d", ""],
    count: EVENTS,
    batch: Number(values.batch),
    from,
    to: now - 60_000,
    accounts: Number(values.accounts),
    share: Number(values.share),
  })) {
    if (writing) await writing;
    writing = deps.store.usage.append(batch, { fresh: true });
    done += batch.length;
    if (done - shown >= 1_000_000 || done === EVENTS) {
      shown = done;
      const s = (performance.now() - started) / 1000;
      console.log(
        `  seeded ${done} events in ${fmt(s, 0)} s: ${fmt(done / s / 1000, 1)}k events/s, ${fmt(diskBytes() / done, 0)} bytes/event on disk`,
      );
    }
  }
  await writing;
  const s = (performance.now() - started) / 1000;
  await deps.close();
  console.log(
    `ingest: ${EVENTS} events in ${fmt(s, 0)} s = ${fmt(EVENTS / s / 1000, 1)}k events/s (write thread, batches of ${values.batch})`,
  );
  writeFileSync(join(DIR, "bench.json"), JSON.stringify({ apiKey, events: EVENTS }));
  return { apiKey };
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

async function main() {
  const meta = join(DIR, "bench.json");
  console.log(
    `Embedded usage log over 366 days in ${DIR}: ${existsSync(meta) ? "seeded before" : `${values.events} events, ${values.accounts} accounts (the measured one ${Number(values.share) * 100}%)`}`,
  );
  const { apiKey } = existsSync(meta)
    ? (JSON.parse(readFileSync(meta, "utf8")) as { apiKey: string })
    : await seed();
  const events = (JSON.parse(readFileSync(meta, "utf8")) as { events: number }).events;
  console.log(
    `disk: ${fmt(diskBytes() / 1e9, 2)} GB (database file + WAL) = ${fmt(diskBytes() / events, 0)} bytes/event`,
  );

  const child = Bun.spawn([process.execPath, import.meta.path, "--serve", "--dir", DIR], {
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = child.stdout.getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("server exited");
      line += new TextDecoder().decode(value);
    }
    const { url } = JSON.parse(line) as { url: string };
    const get = async (path: string) => {
      const r = await fetch(`${url}${path}`, { headers: { "x-api-key": apiKey } });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r;
    };
    console.log(`server RSS at start ${fmt(rssOf(child.pid), 0)} MB`);
    await timeQueries(get, Number(values.reads));
    await new Promise((r) => setTimeout(r, 1000));
    const rss0 = rssOf(child.pid);
    console.log(`server RSS after the queries (settled 1 s): ${fmt(rss0, 0)} MB`);
    const x = await exportAll(get, () => rssOf(child.pid));
    await new Promise((r) => setTimeout(r, 1000));
    console.log(
      `  export (NDJSON, pages of 50,000): ${x.events} events in ${fmt(x.seconds, 2)} s = ${fmt(x.events / x.seconds / 1000, 1)}k events/s; server RSS ${fmt(rss0, 0)} MB before, peak ${fmt(x.peak, 0)} MB, ${fmt(rssOf(child.pid), 0)} MB after`,
    );
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}
