/**
 * A real redis-server on a free loopback port (temp dir, no persistence) with
 * scripts/upstash-local.ts in front of it. Start in beforeAll, stop in afterAll.
 */

import { rmSync } from "node:fs";
import { connect } from "node:net";
import Redis from "ioredis";
import { startUpstashLocal, type UpstashLocal } from "../../scripts/upstash-local";
import { freePort, tempDir } from "./app";
import { describeIf } from "./skip";

/**
 * The tests that need a real redis-server (Debian's `redis-server` package; .ci/run installs it)
 * skip without it, saying why (tests/support/skip.ts; under CI they fail instead).
 */
export const HAS_REDIS = Bun.which("redis-server") !== null;
export const REDIS_MISSING = "redis-server is not installed (apt-get install redis-server)";

/**
 * The environment without Debian's faketime (a run with the clock moved ahead: .ci/run):
 * redis-server cannot start under libfaketime (its allocator reads the clock while libfaketime
 * initializes), so it keeps the real clock, as the Go servers (FerretDB, stripe-mock) do. Its
 * key expiries are relative, so nothing the tests check depends on which clock it reads.
 */
function realClockEnv(): Record<string, string | undefined> {
  const env = { ...process.env };
  const preload = (env.LD_PRELOAD ?? "")
    .split(/[: ]/)
    .filter((lib) => lib && !lib.includes("libfaketime"));
  env.LD_PRELOAD = preload.join(":") || undefined;
  delete env.FAKETIME;
  return env;
}

/** describe() for the tests that need redis-server. */
export const withRedis = describeIf(HAS_REDIS, REDIS_MISSING);

export interface RedisHarness {
  /** the Upstash REST address and token (UPSTASH_REDIS_REST_URL / _TOKEN) */
  url: string;
  token: string;
  redisPort: number;
  /** env for makeApp: the app's counter store is this Upstash-local */
  env: Record<string, string>;
  /** SIGKILL redis-server (the proxy stays up and answers 503) */
  killRedis(): Promise<void>;
  /** start redis-server again on the same port (empty: no persistence) */
  startRedis(): Promise<void>;
  /** the keys matching `pattern` and their values, read from redis-server itself (not the proxy) */
  read(pattern: string): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: "127.0.0.1" }, () => s.write("PING\r\n"));
    s.setTimeout(500, () => {
      s.destroy();
      resolve(false);
    });
    s.on("data", (d) => {
      s.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    s.on("error", () => resolve(false));
  });
}

export async function startRedisHarness(): Promise<RedisHarness> {
  const redisPort = await freePort();
  const dir = tempDir("redis-");
  let proc: ReturnType<typeof Bun.spawn> | null = null;

  const startRedis = async () => {
    proc = Bun.spawn(
      [
        "redis-server",
        "--port",
        String(redisPort),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdout: "ignore", stderr: "inherit", env: realClockEnv() },
    );
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      if (await redisAnswers(redisPort)) return;
      await Bun.sleep(50);
    }
    throw new Error("redis-server did not start (is it installed?)");
  };
  const killRedis = async () => {
    if (!proc) return;
    proc.kill("SIGKILL");
    await proc.exited;
    proc = null;
  };

  await startRedis();
  const token = "harness-token";
  const local: UpstashLocal = await startUpstashLocal({
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    token,
  });
  return {
    url: local.url,
    token,
    redisPort,
    // a generous timeout: on a busy CI machine a slow answer must not turn into fail-open here
    // (timeouts have their own test in failopen.test.ts)
    env: {
      UPSTASH_REDIS_REST_URL: local.url,
      UPSTASH_REDIS_REST_TOKEN: token,
      COUNTER_TIMEOUT_MS: "2000",
    },
    killRedis,
    startRedis,
    async read(pattern) {
      const direct = new Redis(redisPort, "127.0.0.1");
      try {
        const keys = (await direct.keys(pattern)).sort();
        const values = keys.length ? await direct.mget(...keys) : [];
        return Object.fromEntries(keys.map((k, i) => [k, values[i] ?? ""]));
      } finally {
        direct.disconnect();
      }
    },
    async stop() {
      await local.stop();
      await killRedis();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
