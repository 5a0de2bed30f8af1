/**
 * The test runner behind `npm test`: starts each real server the suites share once for the
 * whole run, runs `bun test` on two workers, then stops the servers.
 *
 *   bun scripts/test.ts                 # every test file
 *   bun scripts/test.ts tests/usage     # one folder (any `bun test` arguments pass through)
 *   bun scripts/test.ts --fast          # the files that need no external server or process
 *
 * Shared servers, each skipped (and its tests skipped with a one-line reason) when its binary is
 * missing: FerretDB on PostgreSQL or SQLite (scripts/mongo-local.ts; TEST_MONGODB_URL, unless
 * MONGODB_URL names a server), stripe-mock (TEST_STRIPE_MOCK_URL) and Debian's Chromium
 * (TEST_CHROMIUM_WS, a playwright browser server).
 * redis-server is started per suite (tests/support/redis.ts): suites wipe it.
 * See docs/testing.md.
 */
import { existsSync, readFileSync } from "node:fs";
import { findFerretDb, type MongoLocal, startMongoLocal } from "./mongo-local";
import { type StripeMock, startStripeMock } from "./stripe-mock";

/**
 * What makes a test file slow, read from its text: it uses a shared real server
 * (tests/support/mongo, redis, stripe-mock, chromium), starts loopback web sites
 * (tests/support/web-fixtures, logo-sites) or processes (tests/support/service among them), or
 * says it sweeps the whole catalog ("test:fast leaves this out"). `--fast` leaves those out.
 */
export const SLOW_MARKERS =
  /support\/(mongo|redis|stripe-mock|chromium|usage-stores|port-contract|service|web-fixtures|logo-sites)"|test:fast leaves this out|Bun\.spawn|spawnSync|SERVICE_CMD|runAdmin\(|from "node:child_process"/;

/** Per-file test durations (ms) that balance the shards and workers; written by --update-timings. */
const TIMINGS = "tests/timings.json";
/**
 * The whole suite runs in this many `bun test` runs one after the other, each on two workers
 * that keep their modules across the files they run (--no-isolate: a fresh global per file
 * costs about a second of module loading each); a worker's memory is released when its run ends.
 */
const SHARDS = Number(process.env.TEST_SHARDS ?? 2);
/** `bun test` workers per run (most tests wait on servers and processes more than they compute) */
const WORKERS = Number(process.env.TEST_WORKERS ?? 2);

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

async function startChromium(): Promise<{ ws: string; stop(): Promise<void> } | null> {
  if (!existsSync(CHROMIUM)) return null;
  const { chromium } = await import("playwright-core");
  const server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return { ws: server.wsEndpoint(), stop: () => server.close() };
}

/** Every test file whose text has none of SLOW_MARKERS, as paths for `bun test`. */
/** Every test file, as its path from the project root (sorted). */
const testFiles = () => [...new Bun.Glob("tests/**/*.test.{ts,tsx}").scanSync(".")].sort();

function fastFiles(): string[] {
  return testFiles()
    .filter((f) => !SLOW_MARKERS.test(readFileSync(f, "utf8")))
    .map((f) => `./${f}`);
}

/**
 * Whether this run can put itself in a network namespace of its own, where loopback is the only
 * network (as root, with util-linux's unshare and iproute2's ip), and why not.
 */
function isolation(): { ok: true } | { ok: false; why: string } {
  if (process.env.TEST_NETWORK === "host") return { ok: false, why: "TEST_NETWORK=host" };
  if (process.env.MONGODB_URL) return { ok: false, why: "MONGODB_URL names a server elsewhere" };
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    return { ok: false, why: "a network namespace needs root on Linux" };
  for (const tool of ["unshare", "ip"])
    if (!Bun.which(tool)) return { ok: false, why: `${tool} is not installed` };
  // a container without CAP_SYS_ADMIN refuses a new namespace even to root
  const probe = Bun.spawnSync(["unshare", "--net", "--", "ip", "link", "set", "lo", "up"]);
  if (probe.exitCode !== 0) return { ok: false, why: "unshare --net is refused here" };
  return { ok: true };
}

/**
 * The run again, inside a network namespace where only loopback exists: every server, worker
 * and process the suite starts can reach loopback and nothing else (tests/support/loopback-guard.ts
 * makes an attempt from a test process fail loudly; this stops every other process too).
 */
async function isolated(): Promise<number> {
  const proc = Bun.spawn(
    [
      "unshare",
      "--net",
      "--",
      "sh",
      "-c",
      'ip link set lo up && exec "$@"',
      "sh",
      process.execPath,
      ...process.argv.slice(1),
    ],
    { env: { ...process.env, TEST_NETNS: "1" }, stdio: ["inherit", "inherit", "inherit"] },
  );
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => proc.kill(sig));
  return await proc.exited;
}

async function main() {
  if (!process.env.TEST_NETNS) {
    const net = isolation();
    if (net.ok) process.exit(await isolated());
    console.error(`tests: network not isolated to loopback (${net.why})`);
  }
  let args = process.argv.slice(2);
  const fast = args.includes("--fast");
  args = args.filter((a) => a !== "--fast");
  const env: Record<string, string> = {};
  const stops: (() => unknown)[] = [];

  if (!fast) {
    let mongo: MongoLocal | null = null;
    if (!process.env.MONGODB_URL && !process.env.TEST_MONGODB_URL) {
      const found = findFerretDb();
      if (found.bin) {
        mongo = await startMongoLocal({ bin: found.bin });
        env.TEST_MONGODB_URL = mongo.url;
        stops.push(() => mongo?.stop());
      }
    }
    if (!process.env.TEST_STRIPE_MOCK_URL) {
      const stripe: StripeMock | null = await startStripeMock();
      if (stripe) {
        env.TEST_STRIPE_MOCK_URL = stripe.url;
        stops.push(() => stripe.stop());
      }
    }
    if (!process.env.TEST_CHROMIUM_WS) {
      const browser = await startChromium();
      if (browser) {
        env.TEST_CHROMIUM_WS = browser.ws;
        stops.push(() => browser.stop());
      }
    }
  }

  if (fast && !args.some((a) => !a.startsWith("-"))) args.push(...fastFiles());
  const runs: (Counts & Cost)[] = [];
  let code = 0;
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  const forward = (sig: NodeJS.Signals) => () => proc?.kill(sig);
  process.on("SIGINT", forward("SIGINT"));
  process.on("SIGTERM", forward("SIGTERM"));
  // the whole suite in SHARDS runs one after the other; a run that names files or folders: one
  const parts = args.some((a) => !a.startsWith("-")) ? [[]] : balancedShards(SHARDS);
  for (const part of parts) {
    const cmd = [
      process.execPath,
      "test",
      "--timeout",
      "30000",
      `--parallel=${WORKERS}`,
      "--no-isolate",
    ];
    // per-file durations of an earlier run: the workers start the slowest files first, so both
    // finish together (refresh with `npm test -- --update-timings`: each run merges its files'
    // durations into the file)
    if (existsSync(TIMINGS)) cmd.push(`--timings=${TIMINGS}`);
    const started = performance.now();
    proc = Bun.spawn([...cmd, ...args, ...part], {
      env: { ...process.env, ...env },
      stdio: ["inherit", "inherit", "pipe"],
    });
    const tail = await relay(proc.stderr as ReadableStream<Uint8Array>);
    code ||= await proc.exited;
    runs.push({ ...countsOf(tail), ...costOf(proc, performance.now() - started) });
    if (proc.signalCode) break; // interrupted: no further shard
  }
  for (const stop of stops.reverse()) await stop();
  if (parts.length > 1) printTotals(runs);
  process.exit(code);
}

interface Timings {
  version: number;
  files: Record<string, number>;
}

const readTimings = (file: string): Timings =>
  existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { version: 1, files: {} };

/** What a test file costs beyond its measured duration (loading it, starting its worker's run). */
const PER_FILE_MS = 400;

/**
 * Every test file split into `shards` lists of about the same time by TIMINGS (the longest
 * first, each to the shortest list; a file not measured yet counts as the median).
 */
function balancedShards(shards: number): string[][] {
  const known = readTimings(TIMINGS).files;
  const files = testFiles();
  const times = Object.values(known).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 1000;
  const cost = (f: string) => (known[f] ?? median) + PER_FILE_MS;
  const out = Array.from({ length: shards }, () => ({ ms: 0, files: [] as string[] }));
  for (const f of files.sort((a, b) => cost(b) - cost(a))) {
    const lightest = out.reduce((a, b) => (b.ms < a.ms ? b : a));
    lightest.ms += cost(f);
    lightest.files.push(`./${f}`);
  }
  return out.map((s) => s.files);
}

/** bun test's closing counts ("N pass", "N fail", ..., "Ran N tests across M files."). */
/**
 * What a run cost: its wall time, the CPU time of the run and every process it waited for
 * (its workers and the service processes they started; not the shared servers), and the
 * largest resident set among them.
 */
interface Cost {
  wallS: number;
  cpuS: number;
  maxRssGb: number;
}

function costOf(proc: ReturnType<typeof Bun.spawn>, wallMs: number): Cost {
  const usage = proc.resourceUsage();
  return {
    wallS: wallMs / 1000,
    cpuS: usage ? Number(usage.cpuTime.total) / 1e6 : 0,
    maxRssGb: usage ? usage.maxRSS / 2 ** 30 : 0,
  };
}

interface Counts {
  pass: number;
  fail: number;
  skip: number;
  todo: number;
  tests: number;
  files: number;
}

/** Copy a stream to stderr as it comes; resolves to its last 8 KB (where bun test's counts are). */
async function relay(stream: ReadableStream<Uint8Array>): Promise<string> {
  let tail = "";
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    process.stderr.write(r.value);
    tail = (tail + decoder.decode(r.value, { stream: true })).slice(-8192);
  }
  return tail;
}

function countsOf(text: string): Counts {
  const n = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  const ran = /^Ran (\d+) tests? across (\d+) files?/m.exec(text);
  return {
    pass: n(/^ *(\d+) pass$/m),
    fail: n(/^ *(\d+) fail$/m),
    skip: n(/^ *(\d+) skip$/m),
    todo: n(/^ *(\d+) todo$/m),
    tests: Number(ran?.[1] ?? 0),
    files: Number(ran?.[2] ?? 0),
  };
}

/** The shards' counts summed, in bun test's own words (what .ci/run reads). */
function printTotals(runs: (Counts & Cost)[]) {
  const sum = (k: keyof Counts) => runs.reduce((a, r) => a + r[k], 0);
  const costs = runs.map(
    (r, i) =>
      `shard ${i + 1} of ${runs.length}: ${r.files} files, ${r.tests} tests, ${r.wallS.toFixed(1)} s wall, ` +
      `${r.cpuS.toFixed(1)} s CPU (user + sys), largest process ${r.maxRssGb.toFixed(2)} GB`,
  );
  const lines = ["", ...costs, `\nAll ${runs.length} shards:`, ` ${sum("pass")} pass`];
  if (sum("skip")) lines.push(` ${sum("skip")} skip`);
  if (sum("todo")) lines.push(` ${sum("todo")} todo`);
  lines.push(` ${sum("fail")} fail`, `Ran ${sum("tests")} tests across ${sum("files")} files.`);
  console.error(lines.join("\n"));
}

if (import.meta.main) await main();
