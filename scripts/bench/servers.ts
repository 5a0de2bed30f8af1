/**
 * The servers a benchmark measures, each in its own process (server and load generator never
 * share an event loop with each other or with the bench script):
 *  - startApp(): the real app as a listening server, with a fresh key;
 *  - startBare(): a bare Bun.serve answering every request with fixed bytes;
 *  - startMinimal(): the least a metered route does (key lookup, quota, headers, usage event);
 *  - startUpstashLocal(): redis-server plus scripts/upstash-local.ts, the Upstash counter store;
 *  - tempDir(): a temp dir removed when the bench exits, also on Ctrl-C (removeTempDir earlier).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../lib/net";

export { freePort };

/** The repository's root. */
export const ROOT = join(import.meta.dir, "../..");

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
    [join(ROOT, "scripts/bench/app-server.ts")],
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
  // BARE_HOLD: a JSON file the server parses and keeps (a heap the size of the app's), else none
  const code = `
    globalThis.held = process.env.BARE_HOLD ? JSON.parse(require("fs").readFileSync(process.env.BARE_HOLD, "utf8")) : null;
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

/** scripts/bench/minimal-server.ts answering `body` on every path, with its own key. */
export function startMinimal(body: Uint8Array, env: Record<string, string> = {}) {
  return spawnServer([join(ROOT, "scripts/bench/minimal-server.ts")], {
    ...env,
    BARE_BODY: Buffer.from(body).toString("base64"),
  });
}

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
