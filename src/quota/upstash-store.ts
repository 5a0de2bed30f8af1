import { Redis } from "@upstash/redis";
import type { ConsumeResult, CounterStore } from "./counter-store";

/**
 * Lua scripts: each operation is one atomic EVALSHA (EVAL the first time after a Redis restart,
 * when the script cache is empty), i.e. one HTTP round trip, batched with concurrent requests
 * by the client's auto-pipelining.
 */
const CONSUME = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if limit >= 0 and n >= limit then return {0, n} end
n = redis.call('INCR', KEYS[1])
redis.call('EXPIREAT', KEYS[1], ARGV[2])
return {1, n}`;

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

/** Counters in Upstash Redis over its REST API (`@upstash/redis`, auto-pipelining on). */
export class UpstashCounterStore implements CounterStore {
  readonly kind = "upstash" as const;
  readonly remote = true;
  private redis: Redis;
  private scripts;

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
      consume: this.redis.createScript<[number, number]>(CONSUME),
      release: this.redis.createScript<number>(RELEASE),
      addFrom: this.redis.createScript<number>(ADD_FROM),
      raiseTo: this.redis.createScript<number>(RAISE_TO),
    };
  }

  async consume(key: string, limit: number | null, expireAt: number): Promise<ConsumeResult> {
    const r = await this.scripts.consume.exec([key], [String(limit ?? -1), String(expireAt)]);
    if (!Array.isArray(r) || r.length !== 2) throw new Error("unexpected reply to consume");
    return { allowed: Number(r[0]) === 1, count: Number(r[1]) };
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
