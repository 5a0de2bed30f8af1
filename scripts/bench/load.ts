/**
 * Load generators, each in its own process: autocannon (Node) or Debian's wrk (C, lighter on
 * the CPU); load() picks wrk when installed and returns { rps, p50, p99, ... }.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, type RunningServer, removeTempDir, tempDir } from "./servers";
import { fmt, type LoadResult } from "./stats";

export type { LoadResult } from "./stats";

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
  // the options go in on stdin: thousands of paths are more than one environment variable holds
  const script = `
    const autocannon = require(${JSON.stringify(join(ROOT, "node_modules/autocannon"))});
    let opts = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => { opts += chunk; });
    process.stdin.on("end", () => autocannon(JSON.parse(opts), (err, r) => {
      if (err) { console.error(err); process.exit(1); }
      process.stdout.write(JSON.stringify({
        rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99,
        requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts,
      }));
    }));`;
  const node = Bun.which("node");
  if (!node) throw new Error("node is required to run autocannon");
  const proc = Bun.spawn([node, "-e", script], {
    stdin: new Blob([JSON.stringify(opts)]),
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
