import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createEnterprise } from "../support/app";
import { expectError } from "../support/errors";
import { REDIS_MISSING, type RedisHarness, startRedisHarness } from "../support/redis";
import { describeIf } from "../support/skip";
import { connect, type Served, serve, toolErrorBody, used } from "./util";

/**
 * MCP calls over the Upstash counter store (scripts/upstash-local.ts on a real redis-server):
 * the quota decision is asynchronous there, and shared by every instance.
 */
const ready = Bun.which("redis-server") !== null;
if (!ready) console.warn("skip: MCP over the Upstash counter store needs redis-server on PATH");

let h: RedisHarness;
let s: Served;
beforeAll(async () => {
  if (!ready) return;
  h = await startRedisHarness();
  s = await serve({}, h.env);
});
afterAll(async () => {
  await s?.stop();
  await h?.stop();
});

describeIf(ready, REDIS_MISSING)("MCP over the Upstash counter store", () => {
  test("concurrent calls never push a bucket past its cap; refusals consume nothing", async () => {
    expect(s.deps.quota.store.kind).toBe("upstash");
    const { apiKey } = await createEnterprise(s, { catalog: 10 });
    const client = await connect(s.mcpUrl, { "x-api-key": apiKey });
    const results = (await Promise.all(
      Array.from({ length: 30 }, () =>
        client.callTool({ name: "get_brand", arguments: { slug: "github" } }),
      ),
    )) as CallToolResult[];
    expect(results.filter((r) => !r.isError)).toHaveLength(10);
    const refused = results.filter((r) => r.isError).map(toolErrorBody);
    expect(refused).toHaveLength(20);
    expect(new Set(refused.map((b) => b.error))).toEqual(new Set(["rate_limit_exceeded"]));
    expect((await used(s, apiKey)).catalog).toBe(10);
    // REST sees the same counter
    await expectError(await s.get("/v1/catalog/github", apiKey), 429, "rate_limit_exceeded");
    await client.close();
  });
});
