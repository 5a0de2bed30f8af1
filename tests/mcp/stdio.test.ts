import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { moved, type Served, serve, toolErrorBody, used } from "./util";

/**
 * scripts/mcp-stdio.ts driven by the MCP SDK's Client over its stdio transport, forwarding to
 * the real app on a loopback port. The bridge runs under this test's runtime (process.execPath),
 * so no global bun is needed.
 */
const BRIDGE = join(import.meta.dir, "../../scripts/mcp-stdio.ts");

let s: Served;
beforeAll(async () => {
  s = await serve();
});
afterAll(() => s.stop());

function bridge(env: Record<string, string>) {
  return new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe",
  });
}

describe("the stdio bridge", () => {
  test("lists, calls and reads through a running instance, on the key's counters", async () => {
    const key = await s.key("free");
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(bridge({ BRAND_API_URL: s.base, BRAND_API_KEY: key }));
    expect(client.getServerVersion()?.name).toBe("brand-asset-api");
    expect((await client.listTools()).tools).toHaveLength(7);
    expect((await client.listResourceTemplates()).resourceTemplates).toHaveLength(2);

    const before = await used(s, key);
    const brand = (await client.callTool({
      name: "get_brand",
      arguments: { slug: "github" },
    })) as CallToolResult;
    expect(brand.structuredContent).toMatchObject({ slug: "github", name: "GitHub" });
    const logo = await client.readResource({ uri: "logo://github/color" });
    expect(logo.contents[0]).toMatchObject({
      mimeType: "image/svg+xml",
      _meta: { variant: "mono" },
    });
    expect((logo.contents[0] as { text: string }).text).toStartWith("<svg");
    const missing = (await client.callTool({
      name: "get_brand",
      arguments: { slug: "no-such-brand-xyz" },
    })) as CallToolResult;
    expect(toolErrorBody(missing).error).toBe("service_not_found");
    expect(moved(before, await used(s, key))).toEqual({ catalog: 2, svg: 1 });
    await client.close();
  });

  test("BRAND_API_URL may name /mcp itself", async () => {
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(
      bridge({ BRAND_API_URL: `${s.base}/mcp/`, BRAND_API_KEY: await s.key("pro") }),
    );
    const r = (await client.callTool({
      name: "search_brands",
      arguments: { q: "stripe", limit: 1 },
    })) as CallToolResult;
    expect(r.structuredContent).toMatchObject({ total: 1, matches: [{ slug: "stripe" }] });
    await client.close();
  });

  test("a wrong key: the client's initialize fails with the server's 401 body", async () => {
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    const err = await client
      .connect(
        bridge({
          BRAND_API_URL: s.base,
          BRAND_API_KEY: "bak_0000000000000000_wrongwrongwrongwrongwrongwrongwr",
        }),
      )
      .catch((e) => e);
    expect(String(err)).toContain("invalid_api_key");
    await client.close();
  });

  test("no BRAND_API_KEY: exits 2 with a one-line reason on stderr", () => {
    const r = Bun.spawnSync([process.execPath, BRIDGE], {
      env: { PATH: process.env.PATH ?? "", BRAND_API_URL: s.base },
      stdin: "ignore",
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.toString()).toContain("BRAND_API_KEY is not set");
    expect(r.stdout.toString()).toBe("");
  });
});
