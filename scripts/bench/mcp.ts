#!/usr/bin/env bun
import { loadArgs } from "./args";
import { processCpuSeconds } from "./load";
/**
 * What an MCP call costs next to its REST twin. Prints figures only.
 * The real app runs in its own process (startApp); this script sends, one at a time (latency,
 * not throughput), GET /v1/catalog/github and the same lookup as an MCP tools/call of get_brand
 * (one JSON-RPC POST to /mcp, as any MCP client sends it after initialize; the stateless server
 * builds a fresh MCP server and transport for it). Reports client-side p50/p99 latency and the
 * server process's CPU time per request (user + system, from /proc).
 *   bun scripts/bench/mcp.ts [--requests 1000] [--rounds 3]
 */
import { startApp } from "./servers";
import { fmt, percentile } from "./stats";

const { rounds, values } = loadArgs(
  { rounds: 3 },
  { requests: { type: "string", default: "1000" } },
);
const requests = Number(values.requests);

const server = await startApp({ tier: "internal" });
const headers = { "x-api-key": server.key };
const mcpHeaders = {
  ...headers,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};
const callBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "get_brand", arguments: { slug: "github" } },
});

const kinds: Record<string, () => Promise<Response>> = {
  "REST GET /v1/catalog/github": () => fetch(`${server.url}/v1/catalog/github`, { headers }),
  "MCP tools/call get_brand": () =>
    fetch(`${server.url}/mcp`, { method: "POST", headers: mcpHeaders, body: callBody }),
  "MCP tools/list": () =>
    fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    }),
};

async function run(call: () => Promise<Response>) {
  const ms: number[] = [];
  const cpu0 = processCpuSeconds(server.pid);
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    const r = await call();
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    ms.push(performance.now() - t0);
  }
  const cpu1 = processCpuSeconds(server.pid);
  const cpuUs = cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) * 1e6) / requests : Number.NaN;
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), cpuUs };
}

try {
  // warm up both paths (JIT, caches)
  for (const call of Object.values(kinds))
    for (let i = 0; i < 200; i++) await (await call()).text();
  console.log(`${requests} sequential requests per kind and round, ${rounds} rounds`);
  for (let round = 1; round <= rounds; round++)
    for (const [name, call] of Object.entries(kinds)) {
      const r = await run(call);
      console.log(
        `round ${round}  ${name.padEnd(30)} p50 ${fmt(r.p50, 3)} ms  p99 ${fmt(r.p99, 3)} ms  server CPU ${fmt(r.cpuUs, 0)} µs/request`,
      );
    }
} finally {
  await server.stop();
}
