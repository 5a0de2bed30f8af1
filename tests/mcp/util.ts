import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Bucket } from "../../src/quota/limits";
import { makeApp, type TestApp } from "../support/app";

/** The real app listening on a free loopback port (MCP clients speak real HTTP to it). */
export interface Served extends TestApp {
  base: string;
  mcpUrl: URL;
  stop(): Promise<void>;
}

export async function serve(
  opts: Parameters<typeof makeApp>[1] = {},
  env: Record<string, string> = {},
): Promise<Served> {
  const t = await makeApp(env, opts);
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: t.app.fetch });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    ...t,
    base,
    mcpUrl: new URL("/mcp", base),
    stop: async () => {
      server.stop(true);
      await t.close();
    },
  };
}

/** The SDK's Client over its Streamable HTTP client transport, with the given request headers. */
export async function connect(url: URL, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "brand-api-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** Today's used count per bucket for a key, from GET /v1/usage. */
export async function used(t: TestApp, apiKey: string): Promise<Record<Bucket, number>> {
  const r = await t.get("/v1/usage", apiKey);
  if (r.status !== 200) throw new Error(`GET /v1/usage answered ${r.status}`);
  const body = (await r.json()) as { endpoints: Record<Bucket, { used: number }> };
  return Object.fromEntries(Object.entries(body.endpoints).map(([b, v]) => [b, v.used])) as Record<
    Bucket,
    number
  >;
}

/** The buckets whose count changed between two usage reads, with the change. */
export function moved(before: Record<Bucket, number>, after: Record<Bucket, number>) {
  return Object.fromEntries(
    Object.keys(after)
      .filter((b) => after[b as Bucket] !== before[b as Bucket])
      .map((b) => [b, after[b as Bucket] - before[b as Bucket]]),
  );
}

/** The REST-shaped error body an MCP tool error carries (its text content is that JSON). */
export function toolErrorBody(r: CallToolResult): Record<string, unknown> {
  if (!r.isError) throw new Error(`expected a tool error, got ${JSON.stringify(r).slice(0, 200)}`);
  const first = r.content[0];
  if (first?.type !== "text") throw new Error("tool error without text content");
  return JSON.parse(first.text) as Record<string, unknown>;
}
