import { createHash } from "node:crypto";
import { setImmediate } from "node:timers";
import { Redis } from "@upstash/redis";
import type { ConsumeOptions, ConsumeResult, CounterStore } from "./port";

/**
 * Lua scripts: each operation is one atomic EVALSHA (EVAL the first time after a Redis restart,
 * when the script cache is empty), i.e. one HTTP round trip, batched with concurrent requests
 * by the client's auto-pipelining.
 *
 * CONSUME: KEYS = counter[, seed mark]; ARGV = limit (-1: none), expireAt, floor
 */
const CONSUME = `
local seeded = 1
if KEYS[2] then seeded = redis.call('EXISTS', KEYS[2]) end
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[3])
if floor > n then
  n = floor
  redis.call('SET', KEYS[1], n)
  redis.call('EXPIREAT', KEYS[1], ARGV[2])
end
local limit = tonumber(ARGV[1])
if limit >= 0 and n >= limit then return {0, n, seeded} end
n = redis.call('INCR', KEYS[1])
redis.call('EXPIREAT', KEYS[1], ARGV[2])
return {1, n, seeded}`;

const RELEASE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/** KEYS = from_1..from_n, to_1..to_n */
const ADD_FROM = `
local half = #KEYS / 2
for i = 1, half do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n > 0 then
    redis.call('INCRBY', KEYS[half + i], n)
    redis.call('EXPIREAT', KEYS[half + i], ARGV[1])
  end
end
return half`;

/** ARGV = value_1..value_n, expireAt */
const RAISE_TO = `
local at = ARGV[#KEYS + 1]
for i = 1, #KEYS do
  local v = tonumber(ARGV[i])
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > n then redis.call('SET', KEYS[i], v) end
  redis.call('EXPIREAT', KEYS[i], at)
end
return #KEYS`;

export interface UpstashOptions {
  url: string;
  token: string;
  /** each HTTP request is aborted after this many ms (the guard gives up at the same time) */
  timeoutMs: number;
}

interface PendingConsume {
  keys: string[];
  args: string[];
  resolve: (r: ConsumeResult) => void;
  reject: (err: unknown) => void;
}

const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
const CONSUME_SHA = sha1(CONSUME);
/** most consumes sent in one /pipeline request */
const MAX_BATCH = 500;

function toConsumeResult(r: unknown, asked: boolean): ConsumeResult {
  if (!Array.isArray(r) || r.length !== 3) throw new Error("unexpected reply to consume");
  const out: ConsumeResult = { allowed: Number(r[0]) === 1, count: Number(r[1]) };
  if (asked) out.seeded = Number(r[2]) === 1;
  return out;
}

/**
 * Counters in Upstash Redis over its REST API (`@upstash/redis`, auto-pipelining on).
 * Consumes, the hot path, are batched explicitly: every consume issued during one turn of the
 * event loop goes out in one /pipeline request (the client's auto-pipelining only batches
 * commands issued within the same microtask run, and concurrent HTTP requests never are).
 */
export class UpstashCounterStore implements CounterStore {
  readonly kind = "upstash" as const;
  readonly remote = true;
  private redis: Redis;
  private scripts;
  private queue: PendingConsume[] = [];
  private flushScheduled = false;

  constructor(o: UpstashOptions) {
    this.redis = new Redis({
      url: o.url,
      token: o.token,
      enableAutoPipelining: true,
      enableTelemetry: false,
      // no retries: a slow or dead store must fail fast so requests fail open
      retry: { retries: 0, backoff: () => 0 },
      signal: () => AbortSignal.timeout(o.timeoutMs),
      automaticDeserialization: false,
    });
    this.scripts = {
      release: this.redis.createScript<number>(RELEASE),
      addFrom: this.redis.createScript<number>(ADD_FROM),
      raiseTo: this.redis.createScript<number>(RAISE_TO),
    };
  }

  consume(
    key: string,
    limit: number | null,
    expireAt: number,
    opts?: ConsumeOptions,
  ): Promise<ConsumeResult> {
    return new Promise((resolve, reject) => {
      const keys = opts?.seedKey ? [key, opts.seedKey] : [key];
      const args = [String(limit ?? -1), String(expireAt), String(opts?.floor ?? 0)];
      this.queue.push({ keys, args, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush() {
    this.flushScheduled = false;
    while (this.queue.length) void this.send(this.queue.splice(0, MAX_BATCH));
  }

  /** One pipeline of EVALSHA; entries Redis does not know the script for go again as EVAL. */
  private async send(batch: PendingConsume[]) {
    try {
      const p = this.redis.pipeline();
      for (const c of batch) p.evalsha(CONSUME_SHA, c.keys, c.args);
      const replies = await p.exec({ keepErrors: true });
      const retry: PendingConsume[] = [];
      batch.forEach((c, i) => {
        const r = replies[i];
        if (!r) c.reject(new Error("missing reply"));
        else if (!r.error) c.resolve(toConsumeResult(r.result, c.keys.length > 1));
        else if (/noscript/i.test(r.error)) retry.push(c);
        else c.reject(new Error(r.error));
      });
      if (!retry.length) return;
      const q = this.redis.pipeline();
      for (const c of retry) q.eval(CONSUME, c.keys, c.args);
      const again = await q.exec({ keepErrors: true });
      retry.forEach((c, i) => {
        const r = again[i];
        if (r && !r.error) c.resolve(toConsumeResult(r.result, c.keys.length > 1));
        else c.reject(new Error(r?.error ?? "missing reply"));
      });
    } catch (err) {
      for (const c of batch) c.reject(err);
    }
  }

  async release(key: string): Promise<void> {
    await this.scripts.release.exec([key], []);
  }

  async read(keys: string[]): Promise<number[]> {
    if (!keys.length) return [];
    const values = await this.redis.mget<(string | null)[]>(...keys);
    return values.map((v) => (v === null ? 0 : Number(v)));
  }

  async addFrom(pairs: { from: string; to: string }[], expireAt: number): Promise<void> {
    if (!pairs.length) return;
    const keys = [...pairs.map((p) => p.from), ...pairs.map((p) => p.to)];
    await this.scripts.addFrom.exec(keys, [String(expireAt)]);
  }

  async raiseTo(entries: { key: string; value: number }[], expireAt: number): Promise<void> {
    if (!entries.length) return;
    await this.scripts.raiseTo.exec(
      entries.map((e) => e.key),
      [...entries.map((e) => String(e.value)), String(expireAt)],
    );
  }

  async close(): Promise<void> {}
}
