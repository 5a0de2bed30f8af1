import { afterAll, beforeAll, expect, test } from "bun:test";
import { Redis } from "@upstash/redis";
import { HAS_REDIS, type RedisHarness, startRedisHarness, withRedis } from "../support/redis";

let h: RedisHarness;
beforeAll(async () => {
  if (!HAS_REDIS) return;
  h = await startRedisHarness();
});
afterAll(async () => {
  await h?.stop();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

withRedis("scripts/upstash-local.ts speaks the Upstash REST protocol", () => {
  test("a missing or wrong token is 401 Unauthorized", async () => {
    const none = await fetch(`${h.url}/`, { method: "POST", body: '["PING"]' });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: "Unauthorized" });
    const wrong = await post("/", ["PING"], { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
  });

  test("single command: {result}; a Redis error: 400 {error}", async () => {
    expect(await (await post("/", ["SET", "p:a", "héllo"])).json()).toEqual({ result: "OK" });
    expect(await (await post("/", ["GET", "p:a"])).json()).toEqual({ result: "héllo" });
    expect(await (await post("/", ["INCRBY", "p:n", 5])).json()).toEqual({ result: 5 });
    expect(await (await post("/", ["GET", "p:missing"])).json()).toEqual({ result: null });
    const bad = await post("/", ["INCR", "p:a"]);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^ERR value is not an integer/);
    const junk = await post("/", { not: "a command" });
    expect(junk.status).toBe(400);
  });

  test("Upstash-Encoding: base64 encodes every string but OK", async () => {
    const enc = { "upstash-encoding": "base64" };
    expect(await (await post("/", ["SET", "p:b", "x y"], enc)).json()).toEqual({ result: "OK" });
    expect(await (await post("/", ["GET", "p:b"], enc)).json()).toEqual({
      result: Buffer.from("x y").toString("base64"),
    });
    expect(await (await post("/", ["MGET", "p:b", "p:none"], enc)).json()).toEqual({
      result: [Buffer.from("x y").toString("base64"), null],
    });
  });

  test("pipeline: one entry per command, errors in place", async () => {
    const r = await post("/pipeline", [
      ["SET", "p:c", "1"],
      ["INCR", "p:c"],
      ["HSET", "p:c", "f", "v"],
      ["GET", "p:c"],
    ]);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { result?: unknown; error?: string }[];
    expect(body[0]).toEqual({ result: "OK" });
    expect(body[1]).toEqual({ result: 2 });
    expect(body[2]?.error).toMatch(/^WRONGTYPE/);
    expect(body[3]).toEqual({ result: "2" });
  });

  test("multi-exec runs in one transaction; a command that cannot be queued aborts it", async () => {
    const ok = await post("/multi-exec", [
      ["SET", "p:m", "5"],
      ["INCR", "p:m"],
    ]);
    expect(await ok.json()).toEqual([{ result: "OK" }, { result: 6 }]);
    const aborted = await post("/multi-exec", [
      ["SET", "p:m", "9"],
      ["NOSUCHCOMMAND", "x"],
    ]);
    expect(aborted.status).toBe(400);
    expect(((await aborted.json()) as { error: string }).error).toMatch(/EXECABORT/);
    expect(await (await post("/", ["GET", "p:m"])).json()).toEqual({ result: "6" });
  });

  test("the @upstash/redis client works against it (base64, auto-pipelining, scripts)", async () => {
    const redis = new Redis({ url: h.url, token: h.token, enableAutoPipelining: true });
    await redis.set("p:client", { a: 1 });
    expect(await redis.get<{ a: number }>("p:client")).toEqual({ a: 1 });
    const [x, y] = await Promise.all([redis.incr("p:ctr"), redis.incr("p:ctr")]);
    expect([x, y].sort()).toEqual([1, 2]);
    const script = redis.createScript<number>("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    expect(await script.exec(["p:ctr"], ["10"])).toBe(12);
    expect(await script.exec(["p:ctr"], ["1"])).toBe(13);
    const tx = redis.multi();
    tx.set("p:tx", "v");
    tx.get("p:tx");
    expect(await tx.exec()).toEqual(["OK", "v"]);
  });
});
