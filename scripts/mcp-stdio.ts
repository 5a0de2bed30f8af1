#!/usr/bin/env bun
/**
 * The brand API's MCP server on stdio, for MCP clients that launch a command (desktop apps,
 * IDEs): every JSON-RPC message read from stdin is forwarded to a running instance's /mcp over
 * the Streamable HTTP transport with the API key, and every answer is written back to stdout.
 * The instance does all the work (auth, quotas, usage events); this bridge holds no state.
 *
 *   BRAND_API_URL=https://api.example.com BRAND_API_KEY=bak_... bun scripts/mcp-stdio.ts
 *
 * BRAND_API_URL: the instance's base address (default http://localhost:3000); /mcp is appended
 * unless the address already ends with it. BRAND_API_KEY: the API key (required).
 * Diagnostics go to stderr; stdout carries only MCP messages.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";

function fail(message: string): never {
  console.error(`mcp-stdio: ${message}`);
  process.exit(2);
}

const key = process.env.BRAND_API_KEY?.trim();
if (!key) fail("BRAND_API_KEY is not set (the API key the calls are made with).");
let endpoint: URL;
try {
  const base = new URL(process.env.BRAND_API_URL?.trim() || "http://localhost:3000");
  endpoint = base.pathname.replace(/\/+$/, "").endsWith("/mcp")
    ? base
    : new URL(`${base.pathname.replace(/\/+$/, "")}/mcp`, base);
} catch {
  fail(`BRAND_API_URL is not an http(s) address: ${process.env.BRAND_API_URL}`);
}

const remote = new StreamableHTTPClientTransport(endpoint, {
  requestInit: { headers: { "x-api-key": key } },
});
const local = new StdioServerTransport();
/** ids of initialize requests in flight: their result carries the protocol version to use */
const initializing = new Set<RequestId>();

local.onmessage = async (message: JSONRPCMessage) => {
  if (isJSONRPCRequest(message) && isInitializeRequest(message)) initializing.add(message.id);
  try {
    await remote.send(message);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    console.error(`mcp-stdio: ${endpoint.href}: ${reason}`);
    // a request must get an answer: the failure (401, unreachable, ...) becomes a JSON-RPC error
    if (isJSONRPCRequest(message))
      await local.send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32000, message: `Brand API at ${endpoint.href}: ${reason}` },
      });
  }
};

remote.onmessage = async (message: JSONRPCMessage) => {
  if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
    const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === "string") remote.setProtocolVersion(version);
  }
  await local.send(message);
};
remote.onerror = (err) => console.error(`mcp-stdio: ${err.message}`);

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  await remote.close().catch(() => {});
  process.exit(0);
}
local.onclose = shutdown;
process.stdin.on("end", shutdown);
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

await remote.start();
await local.start();
