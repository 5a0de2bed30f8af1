import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Subprocess } from "bun";
import { tempDir } from "../support/app";
import { adminKey, startService } from "../support/service";
import { describeIf } from "../support/skip";
import { connect } from "./util";

/** The same MCP server under Deno (src/deno.ts): the SDK's web-standard transport is portable. */
const ROOT = join(import.meta.dir, "../..");
const DENO = join(ROOT, "node_modules/.bin/deno");
const ready = existsSync(DENO);
if (!ready) console.warn("skip: MCP under Deno needs the deno devDependency (npm install)");

let proc: Subprocess | undefined;
const dataDir = tempDir();
afterAll(() => {
  proc?.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

const WHY_NOT = "MCP under Deno needs the deno devDependency (npm install)";

describeIf(ready, WHY_NOT)("MCP under Deno", () => {
  test("initialize, tools/list and tools/call against src/deno.ts", async () => {
    const svc = await startService({
      cmd: [DENO, "run", "-A", "src/deno.ts"],
      dataDir,
      readyMs: 30_000,
    });
    proc = svc.proc;
    const base = svc.base;
    const { apiKey } = await adminKey(base, "pro");
    const client = await connect(new URL("/mcp", base), { "x-api-key": apiKey });
    expect((await client.listTools()).tools).toHaveLength(7);
    const brand = (await client.callTool({
      name: "get_brand",
      arguments: { slug: "github" },
    })) as CallToolResult;
    expect(brand.structuredContent).toMatchObject({ slug: "github" });
    const png = (await client.callTool({
      name: "get_logo",
      arguments: { slug: "github", format: "png", size: 32 },
    })) as CallToolResult;
    expect(png.content[0]).toMatchObject({ type: "image", mimeType: "image/png" });
    const usage = (await (
      await fetch(`${base}/v1/usage`, { headers: { "x-api-key": apiKey } })
    ).json()) as {
      endpoints: Record<string, { used: number }>;
    };
    expect(usage.endpoints.catalog?.used).toBe(1);
    expect(usage.endpoints.png?.used).toBe(1);
    await client.close();
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);
});
