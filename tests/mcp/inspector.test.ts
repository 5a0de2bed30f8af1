import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/app";
import { describeIf } from "../support/skip";
import { moved, type Served, serve, used } from "./util";

/**
 * The official MCP Inspector in CLI mode (@modelcontextprotocol/inspector --cli, a devDependency)
 * as an outside client against a running instance. Its CLI (0.15) cannot set request headers on
 * the HTTP transport, so it reaches the authenticated server through the stdio bridge (it
 * launches scripts/mcp-stdio.ts with BRAND_API_URL and BRAND_API_KEY, as a desktop client
 * would) and, over HTTP directly, shows the 401 an unauthenticated client gets. The Inspector
 * runs on Node (it starts `node` itself): without node on PATH these tests are skipped.
 */
const ROOT = join(import.meta.dir, "../..");
const INSPECTOR = join(ROOT, "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
const BRIDGE = join(ROOT, "scripts/mcp-stdio.ts");
const node = Bun.which("node");
const ready = node !== null && existsSync(INSPECTOR);
if (!ready)
  console.warn("skip: MCP Inspector tests need node on PATH and npm install's devDependencies");

let s: Served;
beforeAll(async () => {
  if (ready) s = await serve();
});
afterAll(() => s?.stop());

/** Runs the Inspector CLI; its stdout is the JSON result. */
async function inspector(args: string[]) {
  const proc = Bun.spawn([node as string, INSPECTOR, "--cli", ...args], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "" },
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

const WHY_NOT = "MCP Inspector tests need node on PATH and npm install's devDependencies";

describeIf(ready, WHY_NOT)("MCP Inspector CLI against a running instance", () => {
  test("tools/list and tools/call through the stdio bridge; the call is counted once", async () => {
    const key = await s.key("free");
    const env = ["-e", `BRAND_API_URL=${s.base}`, "-e", `BRAND_API_KEY=${key}`];
    const list = await inspector([...env, process.execPath, BRIDGE, "--method", "tools/list"]);
    expect(list.code).toBe(0);
    const { tools } = JSON.parse(list.out) as { tools: { name: string; title: string }[] };
    expect(tools.map((t) => t.name).sort()).toEqual([
      "get_brand",
      "get_logo",
      "get_usage",
      "list_catalog",
      "resolve_brand",
      "resolve_transactions",
      "search_brands",
    ]);

    const before = await used(s, key);
    const called = await inspector([
      ...env,
      process.execPath,
      BRIDGE,
      "--method",
      "tools/call",
      "--tool-name",
      "search_brands",
      "--tool-arg",
      "q=github",
      "--tool-arg",
      "limit=2", // the Inspector converts it to a number from the tool's input schema
    ]);
    expect(called.code).toBe(0);
    const result = JSON.parse(called.out) as {
      isError?: boolean;
      structuredContent: { total: number; matches: { slug: string }[] };
    };
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.total).toBe(2);
    expect(result.structuredContent.matches[0]?.slug).toBe("github");
    expect(moved(before, await used(s, key))).toEqual({ search: 1 });
  }, 60_000);

  test("resources through a client configuration file shaped like the README's block", async () => {
    // the mcpServers block of README.md / docs/mcp.md, with this machine's runtime and paths
    const config = join(tempDir("mcp-config-"), "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          "brand-assets": {
            command: process.execPath,
            args: [BRIDGE],
            env: { BRAND_API_URL: s.base, BRAND_API_KEY: await s.key("pro") },
          },
        },
      }),
    );
    const env = ["--config", config, "--server", "brand-assets"];
    const templates = await inspector([...env, "--method", "resources/templates/list"]);
    expect(templates.code).toBe(0);
    expect(
      (
        JSON.parse(templates.out) as { resourceTemplates: { uriTemplate: string }[] }
      ).resourceTemplates.map((t) => t.uriTemplate),
    ).toEqual(["brand://{slug}", "logo://{slug}/{variant}"]);
    const read = await inspector([...env, "--method", "resources/read", "--uri", "brand://stripe"]);
    expect(read.code).toBe(0);
    const { contents } = JSON.parse(read.out) as { contents: { text: string }[] };
    expect(JSON.parse(contents[0]?.text ?? "{}")).toMatchObject({ slug: "stripe" });
  }, 60_000);

  test("over HTTP without credentials, the Inspector is refused with 401 invalid_api_key", async () => {
    const r = await inspector([`${s.base}/mcp`, "--transport", "http", "--method", "tools/list"]);
    expect(r.code).not.toBe(0);
    expect(r.out + r.err).toContain("invalid_api_key");
  }, 60_000);
});
