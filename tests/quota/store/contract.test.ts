import { afterAll, beforeAll, expect, test } from "bun:test";
import Redis from "ioredis";
import { MemoryCounterStore } from "../../../src/quota/store/memory";
import { UpstashCounterStore } from "../../../src/quota/store/upstash";
import { HAS_REDIS, type RedisHarness, startRedisHarness, withRedis } from "../../support/redis";
import { counterStoreContract } from "./contract";

let h: RedisHarness;
let upstash: UpstashCounterStore;
const memory = new MemoryCounterStore();

beforeAll(async () => {
  if (!HAS_REDIS) return;
  h = await startRedisHarness();
  upstash = new UpstashCounterStore({ url: h.url, token: h.token, timeoutMs: 2000 });
});
afterAll(async () => {
  await h?.stop();
});

counterStoreContract("memory", () => memory);
/** redis-server's own clock (TIME), which judges the counters' expiry */
const redisNow = async () => {
  const direct = new Redis(h.redisPort, "127.0.0.1");
  try {
    return Number((await direct.time())[0]);
  } finally {
    direct.disconnect();
  }
};
withRedis("redis-server", () => counterStoreContract("upstash", () => upstash, redisNow));

withRedis("Upstash adapter specifics", () => {
  test("counters carry the expiry they were given (checked in redis-server itself)", async () => {
    const at = Math.floor(Date.now() / 1000) + 1234;
    await upstash.consume("ttl:check", null, at);
    const direct = new Redis(h.redisPort, "127.0.0.1");
    try {
      // the absolute expiry, as given: whichever clock redis-server reads
      expect(await direct.call("EXPIRETIME", "ttl:check")).toBe(at);
    } finally {
      direct.disconnect();
    }
  });

  test("scripts are loaded again after the Redis script cache is flushed (EVALSHA → EVAL)", async () => {
    await upstash.consume("flush:k", 5, Math.floor(Date.now() / 1000) + 60);
    const direct = new Redis(h.redisPort, "127.0.0.1");
    try {
      await direct.script("FLUSH");
    } finally {
      direct.disconnect();
    }
    expect(await upstash.consume("flush:k", 5, Math.floor(Date.now() / 1000) + 60)).toEqual({
      allowed: true,
      count: 2,
    });
  });

  test("a wrong token is an error (the guard turns it into fail-open)", async () => {
    const bad = new UpstashCounterStore({ url: h.url, token: "wrong", timeoutMs: 2000 });
    await expect(bad.consume("x", null, Math.floor(Date.now() / 1000) + 60)).rejects.toThrow();
  });
});
