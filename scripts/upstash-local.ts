/**
 * A local stand-in for Upstash Redis: serves the Upstash REST protocol in front of a real
 * redis-server, so `@upstash/redis` (and the service's Upstash counter store) can be tested and
 * self-hosted without the cloud service.
 *
 * Protocol (what @upstash/redis sends and expects):
 *  - `Authorization: Bearer <token>` on every request, else 401 `{"error":"Unauthorized"}`.
 *  - `POST /` body `["INCR","k"]`: one command → 200 `{"result": ...}`, or 400 `{"error": "..."}`
 *    when Redis answers an error.
 *  - `POST /pipeline` body `[["SET","k","v"],["GET","k"]]`: commands run in order, not atomically
 *    → 200 `[{"result": ...}, {"error": "..."}, ...]`.
 *  - `POST /multi-exec`: the same in one MULTI/EXEC transaction; a command Redis refuses to queue
 *    aborts the whole transaction → 400 `{"error": "EXECABORT ..."}`.
 *  - `Upstash-Encoding: base64`: every string in a result is base64 of its bytes, except the
 *    status reply "OK" (the client decodes everything else). Without the header strings are UTF-8.
 *  - Integers are JSON numbers, nil is null, arrays nest.
 * When redis-server cannot be reached the proxy answers 503 `{"error": ...}` at once (no queueing).
 *
 * Run: `bun scripts/upstash-local.ts` with REDIS_URL (default redis://127.0.0.1:6379),
 * UPSTASH_LOCAL_PORT (default 8079), UPSTASH_LOCAL_TOKEN (default "local-token").
 */
import Redis, { ReplyError } from "ioredis";

export interface UpstashLocal {
  url: string;
  token: string;
  stop(): Promise<void>;
}

type Json = string | number | null | Json[];

function encode(value: unknown, base64: boolean): Json {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  if (Buffer.isBuffer(value)) {
    if (!base64) return value.toString("utf8");
    return value.length === 2 && value.toString("latin1") === "OK"
      ? "OK"
      : value.toString("base64");
  }
  if (typeof value === "string") {
    if (!base64 || value === "OK") return value;
    return Buffer.from(value, "utf8").toString("base64");
  }
  if (Array.isArray(value)) return value.map((v) => encode(v, base64));
  if (value instanceof Error) return value.message;
  return String(value);
}

type Command = [string, ...(string | number)[]];

function isCommand(v: unknown): v is Command {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    typeof v[0] === "string" &&
    v.every((a) => typeof a === "string" || typeof a === "number")
  );
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** A reply error from Redis (the command was wrong) vs the connection being down. */
function failure(err: unknown): Response {
  if (err instanceof ReplyError) return json({ error: (err as Error).message }, 400);
  const why = err instanceof Error ? err.message : String(err);
  return json({ error: `redis unavailable: ${why}` }, 503);
}

/** Starts serving once the connection to redis-server is up (it reconnects on its own later). */
export async function startUpstashLocal(opts: {
  redisUrl: string;
  token: string;
  port?: number;
  hostname?: string;
}): Promise<UpstashLocal> {
  const redis = new Redis(opts.redisUrl, {
    // fail at once while redis-server is down (callers have their own timeouts), reconnect soon
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 200,
    lazyConnect: false,
  });
  redis.on("error", () => {});
  if (redis.status !== "ready") await new Promise((resolve) => redis.once("ready", resolve));
  const expected = `Bearer ${opts.token}`;

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    async fetch(req) {
      if (req.headers.get("authorization") !== expected)
        return json({ error: "Unauthorized" }, 401);
      if (req.method !== "POST") return json({ error: "ERR only POST is supported" }, 405);
      const path = new URL(req.url).pathname.replace(/\/+$/, "") || "/";
      const base64 = req.headers.get("upstash-encoding")?.toLowerCase() === "base64";
      let body: unknown;
      try {
        body = await req.json();
      } catch {
        return json({ error: "ERR failed to parse command" }, 400);
      }
      if (path === "/") {
        if (!isCommand(body)) return json({ error: "ERR failed to parse command" }, 400);
        const [name, ...args] = body;
        try {
          return json({ result: encode(await redis.callBuffer(name, ...args), base64) });
        } catch (err) {
          return failure(err);
        }
      }
      if (path === "/pipeline" || path === "/multi-exec") {
        if (!Array.isArray(body) || body.length === 0 || !body.every(isCommand))
          return json({ error: "ERR failed to parse pipeline request" }, 400);
        const batch = path === "/pipeline" ? redis.pipeline() : redis.multi();
        for (const [name, ...args] of body as Command[]) batch.callBuffer(name, ...args);
        let results: [Error | null, unknown][] | null;
        try {
          results = await batch.exec();
        } catch (err) {
          return failure(err);
        }
        if (!results) return json({ error: "ERR transaction aborted" }, 400);
        const connectionLost = results.find(([e]) => e && !(e instanceof ReplyError));
        if (connectionLost) return failure(connectionLost[0]);
        return json(
          results.map(([e, r]) => (e ? { error: e.message } : { result: encode(r, base64) })),
        );
      }
      return json({ error: `ERR unknown endpoint ${path}` }, 404);
    },
  });

  return {
    url: `http://${server.hostname}:${server.port}`,
    token: opts.token,
    async stop() {
      server.stop(true);
      redis.disconnect();
    },
  };
}

if (import.meta.main) {
  const local = await startUpstashLocal({
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    token: process.env.UPSTASH_LOCAL_TOKEN ?? "local-token",
    port: Number(process.env.UPSTASH_LOCAL_PORT ?? 8079),
    hostname: process.env.UPSTASH_LOCAL_HOST ?? "127.0.0.1",
  });
  console.log(JSON.stringify({ url: local.url }));
  const stop = async () => {
    await local.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}
