#!/usr/bin/env bun
/**
 * Server instructions per request, counted by valgrind's callgrind (prints figures only).
 *
 *   bun scripts/bench/instructions.ts [--warmup 8000] [--requests 6000] [--parallel 2]
 *
 * Requests per second on a small shared VM move by 2x from one minute to the next, and the load
 * generator shares the server's cores. Instruction counts move much less, whatever else the
 * machine does: the bare server repeats within 1%, the app's main thread within about 8% (when
 * the JIT's background compiles land varies, since valgrind runs one thread at a time). So this
 * bench shows differences of more than about 10% between two versions of the code; smaller ones
 * need several runs. Each server runs under callgrind with instrumentation switched on once it
 * is listening; `--warmup` requests let the JIT settle, the counters are zeroed, then
 * `--requests` more are made (4 keep-alive connections from a Node process) and the server is
 * stopped (SIGTERM: its shutdown, including the last usage flush, is in the count). Printed per
 * request: all threads, and the main (event loop) thread.
 *
 * What it does not count: the kernel (socket reads and writes, wakeups, fdatasync), which is
 * about 60% of the bare server's CPU time and the same for every server here. So a ratio of
 * instruction counts is not a ratio of requests per second: it is the user-space work only.
 *
 * Configurations: the bare Bun.serve returning the SVG bytes (the baseline of the throughput
 * benches), GET /v1/svg/github and GET /v1/catalog/github on the real app (internal key, in-
 * memory counters), and the SVG route with a no-op usage recorder (the cost of event logging).
 * Under valgrind the app serves a few hundred requests per second, so USAGE_FLUSH_MS is raised
 * to 10 s for both app configurations: batches then hold thousands of events (up to
 * USAGE_FLUSH_EVENTS, 8,192), as they do under real load, instead of being flushed every 250 ms
 * with a handful of events.
 * Needs valgrind (Debian's `valgrind` package); prints a note and exits when it is missing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type RunningServer, removeTempDir, startApp, startBare, tempDir } from "./servers";
import { fmt } from "./stats";

const { values } = parseArgs({
  options: {
    warmup: { type: "string", default: "8000" },
    requests: { type: "string", default: "6000" },
    parallel: { type: "string", default: "2" },
  },
});
const WARMUP = Number(values.warmup);
const REQUESTS = Number(values.requests);
const PARALLEL = Math.max(1, Number(values.parallel));

if (!Bun.which("valgrind") || !Bun.which("callgrind_control")) {
  console.log("valgrind is not installed (apt-get install valgrind): nothing to measure.");
  process.exit(0);
}

interface Config {
  label: string;
  path: string;
  start(prefix: string[]): Promise<RunningServer>;
}

const APP_ENV = { USAGE_FLUSH_MS: "10000" };
const configs: Config[] = [
  {
    label: "bare Bun.serve, SVG bytes + content-type",
    path: "/",
    start: async (prefix) => {
      const svg = await svgBytes();
      return startBare(svg, { "content-type": "image/svg+xml" }, prefix);
    },
  },
  {
    label: "GET /v1/svg/github",
    path: "/v1/svg/github",
    start: (prefix) => startApp({ env: APP_ENV, prefix }),
  },
  {
    label: "GET /v1/svg/github, no-op usage recorder",
    path: "/v1/svg/github",
    start: (prefix) => startApp({ env: { ...APP_ENV, BENCH_USAGE_LOG: "off" }, prefix }),
  },
  {
    label: "GET /v1/catalog/github",
    path: "/v1/catalog/github",
    start: (prefix) => startApp({ env: APP_ENV, prefix }),
  },
];

/** The bytes the app serves for the SVG route (one short native run of the app). */
let svgCache: Uint8Array | undefined;
async function svgBytes(): Promise<Uint8Array> {
  if (svgCache) return svgCache;
  const app = await startApp();
  try {
    const res = await fetch(`${app.url}/v1/svg/github`, { headers: { "x-api-key": app.key } });
    svgCache = new Uint8Array(await res.arrayBuffer());
    return svgCache;
  } finally {
    await app.stop();
  }
}

/**
 * `n` GET requests over 4 keep-alive connections, from a separate Node process (node:http with
 * a keep-alive agent: one connection per loop for the whole run, few request headers). Not
 * lib.ts's autocannon: its 10 s request timeout trips on a server running under valgrind.
 */
async function requests(url: string, key: string, n: number) {
  const script = `
    const http = require("node:http");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const headers = process.env.KEY ? { "x-api-key": process.env.KEY } : {};
    let left = Number(process.env.N);
    const one = () => new Promise((resolve, reject) => {
      http.get(process.env.URL, { agent, headers }, (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error("status " + res.statusCode))));
      }).on("error", reject);
    });
    Promise.all(Array.from({ length: 4 }, async () => { while (left-- > 0) await one(); }))
      .then(() => agent.destroy(), (err) => { console.error(err.message); process.exit(1); });`;
  const node = Bun.which("node");
  if (!node) throw new Error("node is required");
  const proc = Bun.spawn([node, "-e", script], {
    env: { ...process.env, URL: url, KEY: key, N: String(n) },
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0) throw new Error(`${url}: requests failed`);
}

async function control(pid: number, ...args: string[]) {
  const proc = Bun.spawn(["callgrind_control", ...args, String(pid)], { stdout: "ignore" });
  if ((await proc.exited) !== 0) throw new Error(`callgrind_control ${args.join(" ")} failed`);
}

/** Sum of `summary:` over callgrind output files (one per thread with --separate-threads). */
function summed(dir: string, only?: (file: string) => boolean): number {
  let total = 0;
  for (const f of readdirSync(dir)) {
    if (!f.startsWith("cg.") || (only && !only(f))) continue;
    const m = /^summary:\s*(\d+)/m.exec(readFileSync(join(dir, f), "utf8"));
    if (m) total += Number(m[1]);
  }
  return total;
}

interface Count {
  all: number;
  main: number;
}

async function measure(c: Config): Promise<Count> {
  const dir = tempDir("bench-cg-");
  const prefix = [
    "valgrind",
    "--tool=callgrind",
    "--instr-atstart=no",
    "--separate-threads=yes",
    "--smc-check=all-non-file",
    `--callgrind-out-file=${join(dir, "cg.%p")}`,
  ];
  const server = await c.start(prefix);
  try {
    await control(server.pid, "-i", "on");
    await requests(server.url + c.path, server.key, WARMUP);
    await control(server.pid, "-z");
    await requests(server.url + c.path, server.key, REQUESTS);
  } finally {
    await server.stop();
  }
  // thread 1 is the main thread: its file ends in -01
  const count = {
    all: summed(dir) / REQUESTS,
    main: summed(dir, (f) => f.endsWith("-01")) / REQUESTS,
  };
  removeTempDir(dir);
  return count;
}

console.log(
  `\nInstructions per request under callgrind (${WARMUP} warm-up requests, then ${REQUESTS} counted; ${PARALLEL} servers at a time)`,
);
await svgBytes();
const counts: Count[] = new Array(configs.length);
for (let i = 0; i < configs.length; i += PARALLEL) {
  const batch = configs.slice(i, i + PARALLEL);
  const done = await Promise.all(batch.map(measure));
  done.forEach((d, j) => {
    counts[i + j] = d;
  });
}
const k = (n: number) => `${fmt(n / 1000)}k`;
for (const [i, c] of configs.entries()) {
  const n = counts[i]!;
  console.log(
    `  ${c.label.padEnd(44)} all threads ${k(n.all).padStart(7)}   main ${k(n.main).padStart(7)}`,
  );
}
const [bare, svg, svgNoLog, catalog] = counts as [Count, Count, Count, Count];
/** "+8.9%" or "-3.0%": `with` against `without` */
const change = (with_: number, without: number) => {
  const pct = (100 * (with_ - without)) / without;
  return `${pct >= 0 ? "+" : ""}${fmt(pct)}%`;
};
console.log(
  `  user-space work of bare / SVG route: ${fmt((100 * bare.all) / svg.all)}% (all threads); bare / catalog route: ${fmt((100 * bare.all) / catalog.all)}%`,
);
console.log(
  `  usage logging on the SVG route: ${change(svg.main, svgNoLog.main)} main-thread instructions, ${change(svg.all, svgNoLog.all)} all threads`,
);
