/**
 * Shared benchmark helpers (print figures, never assert):
 *  - startApp(): the real app as a listening server in its own Bun process, with a fresh key;
 *  - startBare(): a bare Bun.serve in its own process answering every request with fixed bytes;
 *  - autocannon(): runs autocannon in a separate Node process and returns { rps, p50, p99 };
 *  - wrk(): the same with Debian's wrk (C, lighter on the CPU); load() picks wrk when installed.
 *  - tempDir(): a temp dir removed when the bench exits, also on Ctrl-C (removeTempDir earlier);
 *  - startUpstashLocal(): redis-server plus scripts/upstash-local.ts, the Upstash counter store;
 *  - loadArgs(): the command line every load benchmark shares (--duration, --connections, --rounds).
 * Server and load generator never share an event loop with each other or with the bench script.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { freePort } from "../lib/net";

export { freePort };

const ROOT = join(import.meta.dir, "../..");

const temps = new Set<string>();
let cleanupHooked = false;

/**
 * A temp dir under the OS temp dir, removed by removeTempDir or when the bench exits. The first
 * call also makes Ctrl-C end the bench (exit 130, which runs that cleanup) instead of letting it
 * go on with half a run: the servers and wrk it started get the same SIGINT.
 */
export function tempDir(prefix: string): string {
  if (!cleanupHooked) {
    cleanupHooked = true;
    process.once("exit", () => {
      for (const dir of temps) rmSync(dir, { recursive: true, force: true });
    });
    process.once("SIGINT", () => {
      console.error("interrupted");
      process.exit(130);
    });
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  temps.delete(dir);
}

export interface RunningServer {
  url: string;
  /** the server's process id (valgrind's when it runs under `prefix`) */
  pid: number;
  /** an API key of the requested tier (empty for startBare) */
  key: string;
  stop(): Promise<void>;
  /**
   * The garbage collections since the last call (started with `BUN_JSC_logGC=1` in env: the
   * engine's GC log is read from the server's stderr instead of passed through), else [].
   */
  collections(): GcPause[];
}

/** One collection from JavaScriptCore's GC log: its kind and how long it paused the thread. */
export interface GcPause {
  kind: string;
  ms: number;
}

const GC_LINE = /=> (\w+Collection),.*?, p=([\d.]+)ms/g;

export async function spawnServer(
  args: string[],
  env: Record<string, string>,
  /** a command the server runs under, e.g. valgrind and its options */
  prefix: string[] = [],
  /** the checkout it runs in (default this one) */
  cwd = ROOT,
): Promise<RunningServer> {
  const traceGc = env.BUN_JSC_logGC === "1";
  const proc = Bun.spawn([...prefix, process.execPath, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: traceGc ? "pipe" : "inherit",
  });
  let gcs: GcPause[] = [];
  if (traceGc) {
    const err = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    void (async () => {
      const dec = new TextDecoder();
      let tail = "";
      for (;;) {
        const { value, done } = await err.read();
        if (done) break;
        const text = tail + dec.decode(value, { stream: true });
        const cut = text.lastIndexOf("\n") + 1;
        for (const m of text.slice(0, cut).matchAll(GC_LINE))
          gcs.push({ kind: m[1] as string, ms: Number(m[2]) });
        tail = text.slice(cut);
      }
    })().catch(() => {});
  }
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  // the announcement is the first line with a url (a log line may come before it, e.g. the
  // MongoDB store's "seeded MongoDB catalog")
  while (!/^\{"url":.*\n/m.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server ${args.join(" ")} exited before announcing its address`);
    text += decoder.decode(value, { stream: true });
  }
  text = text.slice(text.search(/^\{"url":/m));
  // keep reading what the server prints afterwards (request logs), as a log collector would:
  // a full pipe would block the server
  void (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => {});
  const first = JSON.parse(text.slice(0, text.indexOf("\n"))) as { url: string; key?: string };
  return {
    url: first.url,
    pid: proc.pid,
    key: first.key ?? "",
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
    collections() {
      const taken = gcs;
      gcs = [];
      return taken;
    },
  };
}

/** The real app (Bun.serve({ fetch: app.fetch })) with a fresh key of `tier` (default internal). */
export function startApp(
  opts: { tier?: string; env?: Record<string, string>; prefix?: string[] } = {},
) {
  return spawnServer(
    [join(ROOT, "scripts/bench/lib-server.ts")],
    { ...opts.env, BENCH_TIER: opts.tier ?? "internal" },
    opts.prefix,
  );
}

/**
 * A bare Bun.serve answering every request with `body` and `headers` (the ceiling to compare to).
 * With `readHeader`, it also reads that request header (answering 401 when it is missing), as
 * any server that checks a credential must: the contract's floor, not just the transport's.
 */
export function startBare(
  body: Uint8Array | string,
  headers: Record<string, string> = {},
  prefix: string[] = [],
  readHeader?: string,
  /** more environment for the server process (e.g. BUN_JSC_logGC=1) */
  env: Record<string, string> = {},
) {
  const answer = readHeader
    ? `(req) => req.headers.get(${JSON.stringify(readHeader)}) ? new Response(body, { headers }) : new Response(null, { status: 401 })`
    : "() => new Response(body, { headers })";
  const code = `
    const body = Buffer.from(process.env.BARE_BODY, "base64");
    const headers = JSON.parse(process.env.BARE_HEADERS);
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: ${answer} });
    console.log(JSON.stringify({ url: "http://127.0.0.1:" + s.port }));
    process.on("SIGTERM", () => { s.stop(true); process.exit(0); });`;
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return spawnServer(
    ["-e", code],
    {
      ...env,
      BARE_BODY: Buffer.from(bytes).toString("base64"),
      BARE_HEADERS: JSON.stringify(headers),
    },
    prefix,
  );
}

export interface LoadResult {
  rps: number;
  /** latency percentiles in ms */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /**
   * CPU time (user + system, all threads) the server process used during the run, per request,
   * in µs; present when `serverPid` was given and /proc can be read. Steadier than req/s on a
   * shared machine, since a slower run also serves fewer requests.
   */
  cpuUsPerRequest?: number;
}

export interface LoadOptions {
  /** base url, e.g. http://127.0.0.1:1234 */
  url: string;
  /** paths cycled through by every connection (default ["/"]) */
  paths?: string[];
  headers?: Record<string, string>;
  connections?: number;
  /** seconds */
  duration?: number;
  /** stop after this many requests instead of after `duration` */
  amount?: number;
  /** cap on requests per second over all connections */
  overallRate?: number;
  /** the server's process id: its CPU time per request is reported (`cpuUsPerRequest`) */
  serverPid?: number;
  /** names the run in the progress line `load` prints (default: the url and first path) */
  label?: string;
}

/** `load` on a server started here: its key as X-API-Key (if any), its CPU time per request. */
export const loadServer = (
  s: Pick<RunningServer, "url" | "key" | "pid">,
  o: Omit<LoadOptions, "url" | "headers" | "serverPid">,
) => load({ ...o, url: s.url, headers: s.key ? { "x-api-key": s.key } : {}, serverPid: s.pid });

/** Run autocannon in a separate Node process (not the server's, not the bench script's). */
export async function autocannon(o: LoadOptions): Promise<LoadResult> {
  const paths = o.paths ?? ["/"];
  const opts = {
    url: o.url,
    connections: o.connections ?? 32,
    duration: o.duration ?? 5,
    ...(o.amount ? { amount: o.amount } : {}),
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
    headers: o.headers ?? {},
    requests: paths.map((path) => ({ method: "GET", path })),
  };
  const script = `
    const autocannon = require(${JSON.stringify(join(ROOT, "node_modules/autocannon"))});
    autocannon(JSON.parse(process.env.AC_OPTS), (err, r) => {
      if (err) { console.error(err); process.exit(1); }
      process.stdout.write(JSON.stringify({
        rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99,
        requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts,
      }));
    });`;
  const node = Bun.which("node");
  if (!node) throw new Error("node is required to run autocannon");
  const proc = Bun.spawn([node, "-e", script], {
    env: { ...process.env, AC_OPTS: JSON.stringify(opts) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("autocannon failed");
  return JSON.parse(out) as LoadResult;
}

/**
 * Run wrk (Debian's `wrk`, a C load generator that needs far less CPU per request than
 * autocannon) with a generated Lua script cycling through `paths`. Latencies in ms with
 * microsecond resolution. No `overallRate`/`amount`: use autocannon for fixed-rate runs.
 */
export async function wrk(o: LoadOptions): Promise<LoadResult> {
  const bin = Bun.which("wrk");
  if (!bin) throw new Error("wrk is not installed (apt-get install wrk)");
  if (o.overallRate || o.amount) throw new Error("wrk runs have no fixed rate or amount");
  const paths = o.paths ?? ["/"];
  // One path: wrk's static request (no Lua call per request, so the generator takes less of
  // the CPU it shares with the server). Several: a Lua `request` cycling through them.
  const single = paths.length === 1;
  const cycle = `
    local paths = { ${paths.map((p) => JSON.stringify(p)).join(", ")} }
    local i = 0
    request = function()
      i = i + 1
      return wrk.format("GET", paths[(i % #paths) + 1])
    end`;
  const lua = `
    ${Object.entries(o.headers ?? {})
      .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
      .join("\n")}
    ${single ? "" : cycle}
    done = function(s, latency, requests)
      local e = s.errors
      io.write(string.format('{"requests":%d,"us":%d,"p50":%.3f,"p99":%.3f,"non2xx":%d,"errors":%d}\\n',
        s.requests, s.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        e.status, e.connect + e.read + e.write + e.timeout))
    end`;
  // in a tempDir: removed also when the bench is interrupted mid-run
  const dir = tempDir("bench-wrk-");
  const script = join(dir, "load.lua");
  await Bun.write(script, lua);
  try {
    const connections = o.connections ?? 32;
    const proc = Bun.spawn(
      [
        bin,
        "-t1",
        `-c${connections}`,
        `-d${o.duration ?? 5}s`,
        "-s",
        script,
        single ? `${o.url}${paths[0]}` : o.url,
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    const out = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error("wrk failed");
    const json = out.slice(out.lastIndexOf("{"));
    const r = JSON.parse(json) as {
      requests: number;
      us: number;
      p50: number;
      p99: number;
      non2xx: number;
      errors: number;
    };
    return {
      rps: r.requests / (r.us / 1e6),
      p50: r.p50,
      p99: r.p99,
      requests: r.requests,
      non2xx: r.non2xx,
      errors: r.errors,
    };
  } finally {
    removeTempDir(dir);
  }
}

let clockTicks: number | undefined;

/** CPU seconds (user + system, all threads) used so far by process `pid`; null without /proc. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    clockTicks ??= Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString()) || 100;
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return null;
  }
}

/** wrk when installed (lighter client, so the server is what is measured), else autocannon. */
export async function load(o: LoadOptions): Promise<LoadResult> {
  const before = o.serverPid ? processCpuSeconds(o.serverPid) : null;
  const r = await (Bun.which("wrk") && !o.overallRate && !o.amount ? wrk(o) : autocannon(o));
  const after = o.serverPid ? processCpuSeconds(o.serverPid) : null;
  if (before !== null && after !== null && r.requests > 0)
    r.cpuUsPerRequest = ((after - before) * 1e6) / r.requests;
  progress(o, r);
  return r;
}

/** One line per run on stderr as it finishes, so a long bench shows it is moving. */
function progress(o: LoadOptions, r: LoadResult) {
  const what = o.label ?? `${o.url}${o.paths?.[0] ?? "/"}`;
  const cpu =
    r.cpuUsPerRequest === undefined ? "" : `, server CPU ${fmt(r.cpuUsPerRequest)} µs/req`;
  const time = new Date().toISOString().slice(11, 19);
  console.error(`  [${time}] ${what}: ${fmt(r.rps, 0)} req/s, p99 ${r.p99} ms${cpu}`);
}

/** Which load generator `load` uses on this machine. */
export const loadGenerator = () => (Bun.which("wrk") ? "wrk" : "autocannon");

/**
 * Per round of interleaved runs, `of(a[i])` as a percentage of `of(b[i])` (throughput by
 * default; NaN where a figure is missing).
 */
export function roundRatios(
  a: LoadResult[],
  b: LoadResult[],
  of: (r: LoadResult) => number | undefined = (r) => r.rps,
): number[] {
  const n = Math.min(a.length, b.length);
  return Array.from(
    { length: n },
    (_, i) => (100 * (of(a[i]!) ?? Number.NaN)) / (of(b[i]!) ?? Number.NaN),
  );
}

/**
 * Throughput of `a` as a percentage of `b`, from interleaved runs: the median of the per-round
 * ratios a[i] / b[i]. Pairing runs made seconds apart cancels the slow drift of a shared
 * machine's speed, which a ratio of two separate medians does not.
 */
export function pairedRatio(a: LoadResult[], b: LoadResult[]): number {
  return percentile(roundRatios(a, b), 50);
}

/**
 * A distribution-free confidence interval for the median of `values` (default 95%): the pair
 * of order statistics x(k), x(n+1-k) with the largest k such that a Binomial(n, 1/2) count
 * falls below k with probability at most (1 - confidence) / 2. Needs at least 6 values for
 * 95%; with fewer the interval is the whole range.
 */
export function medianInterval(values: number[], confidence = 0.95): [number, number] {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = sorted.length;
  if (!n) return [Number.NaN, Number.NaN];
  const tail = (1 - confidence) / 2;
  // P(X <= j) for X ~ Binomial(n, 1/2), accumulated until it passes the tail
  let k = 0;
  let cdf = 0;
  let pmf = 0.5 ** n;
  for (let j = 0; j < n; j++) {
    cdf += pmf;
    if (cdf > tail) break;
    k = j + 1;
    pmf = (pmf * (n - j)) / (j + 1);
  }
  const lo = Math.max(k, 1);
  return [sorted[lo - 1] as number, sorted[n - lo] as number];
}

/**
 * Whether a target is met, judged on the 95% interval of the median rather than the median
 * alone: MET when the whole interval is on the target's side, MISSED when none of it is, and
 * UNDECIDED (more rounds needed) when the interval straddles the target.
 */
export function verdict(interval: [number, number], target: number, want: "above" | "below") {
  const [lo, hi] = interval;
  const ok = want === "above" ? lo >= target : hi < target;
  const bad = want === "above" ? hi < target : lo >= target;
  return ok ? "MET" : bad ? "MISSED" : "UNDECIDED (interval straddles the target; run more rounds)";
}

/** "median% (95% interval lo..hi%)" */
export const fmtMedian = (values: number[], digits = 1) => {
  const [lo, hi] = medianInterval(values);
  return `${fmt(percentile(values, 50), digits)}% (95% interval ${fmt(lo, digits)}..${fmt(hi, digits)}%)`;
};

/** "median% (95% interval ..) (target >= 60%): MISSED", judged on the interval (see verdict) */
export const judged = (values: number[], target: number, want: "above" | "below") =>
  `${fmtMedian(values)} (target ${want === "above" ? ">=" : "<"} ${target}%): ${verdict(medianInterval(values), target, want)}`;

/** Per-round percentages for printing, e.g. "37% 32% 41%". */
export const fmtRounds = (ratios: number[], digits = 0) =>
  ratios.map((r) => `${fmt(r, digits)}%`).join(" ");

/** p-th percentile (0..100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));

/** redis answers PING on the port */
const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ port, host: "127.0.0.1" }, () => s.write("PING\r\n"));
    s.on("data", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });

/** redis-server (no persistence) + the Upstash-REST proxy, each in its own process. */
export async function startUpstashLocal() {
  if (!Bun.which("redis-server")) throw new Error("redis-server is not installed");
  const redisPort = await freePort();
  const dir = tempDir("bench-redis-");
  const redis = Bun.spawn(
    ["redis-server", "--port", String(redisPort), "--bind", "127.0.0.1", "--save", ""].concat([
      "--appendonly",
      "no",
      "--dir",
      dir,
    ]),
    { stdout: "ignore", stderr: "inherit" },
  );
  while (!(await answers(redisPort))) await Bun.sleep(50);
  const port = await freePort();
  const token = "bench-token";
  const proxy = Bun.spawn([process.execPath, join(ROOT, "scripts/upstash-local.ts")], {
    env: {
      ...process.env,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      UPSTASH_LOCAL_PORT: String(port),
      UPSTASH_LOCAL_TOKEN: token,
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proxy.stdout.getReader();
  await reader.read();
  reader.releaseLock();
  return {
    env: { UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${port}`, UPSTASH_REDIS_REST_TOKEN: token },
    async stop() {
      proxy.kill("SIGTERM");
      await proxy.exited;
      redis.kill("SIGTERM");
      await redis.exited;
      removeTempDir(dir);
    },
  };
}

/** A script's defaults for the shared options (absent: the option is not used by it). */
export interface LoadDefaults {
  /** seconds of load per run */
  duration?: number;
  /** concurrent connections; a script may accept a list (`--connections 16,50`) */
  connections?: number | number[];
  /** interleaved rounds */
  rounds?: number;
}

/**
 * The command line of a load benchmark: `--duration` (seconds), `--connections` (one number or
 * a comma-separated list) and `--rounds`, with the script's `defaults`, plus its own `options`
 * (node:util parseArgs syntax; their values come back in `values`). A value that is not a
 * positive number ends the script with exit code 2 and says which; one neither given nor
 * defaulted is NaN.
 */
export function loadArgs<O extends ParseArgsOptionsConfig>(
  defaults: LoadDefaults,
  options: O = {} as O,
) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      ...options,
    },
  });
  const v = values as Record<string, string | boolean | undefined>;
  const numbers = (name: string, fallback: number | number[] | undefined): number[] => {
    const raw = v[name];
    if (raw === undefined) return fallback === undefined ? [] : [fallback].flat();
    const list = String(raw).split(",").map(Number);
    if (list.some((n) => !(n > 0) || !Number.isFinite(n))) {
      console.error(
        `--${name} must be a positive number${name === "connections" ? " (or a comma-separated list)" : ""}, not ${raw}`,
      );
      process.exit(2);
    }
    return list;
  };
  const connectionSets = numbers("connections", defaults.connections);
  return {
    duration: numbers("duration", defaults.duration)[0] ?? Number.NaN,
    connections: connectionSets[0] ?? Number.NaN,
    connectionSets,
    rounds: numbers("rounds", defaults.rounds)[0] ?? Number.NaN,
    /** the script's own options, as parseArgs returns them */
    values: v,
    positionals,
  };
}
