import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  LATEST_PROTOCOL_VERSION,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { createEnterprise, useAccountIdBearer } from "../support/app";
import { expectError } from "../support/errors";
import { accountEvents } from "../usage/util";
import { connect, moved, type Served, serve, toolErrorBody, used } from "./util";

/**
 * The MCP server at /mcp, driven by the MCP SDK's own Client over its Streamable HTTP client
 * transport against the real app on a loopback port (real catalog, search, renderer, quotas and
 * usage log).
 */
let s: Served;
beforeAll(async () => {
  s = await serve({ customize: useAccountIdBearer });
});
afterAll(() => s.stop());

const TOOLS = [
  "search_brands",
  "get_brand",
  "resolve_brand",
  "resolve_transactions",
  "get_logo",
  "list_catalog",
  "get_usage",
];

const call = (c: Client, name: string, args: Record<string, unknown> = {}) =>
  c.callTool({ name, arguments: args }) as Promise<CallToolResult>;

const textOf = (r: CallToolResult, i = 0) => {
  const item = r.content[i];
  if (item?.type !== "text") throw new Error(`content ${i} is ${item?.type}, not text`);
  return item.text;
};

/** Raw JSON-RPC POST to /mcp (what a client library sends). */
function rpc(body: unknown, headers: Record<string, string>) {
  return fetch(s.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe("MCP handshake and listings", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(s.mcpUrl, { "x-api-key": await s.key("pro") });
  });
  afterAll(() => client.close());

  test("initialize: server info, tools and resources capabilities, agent instructions", () => {
    expect(client.getServerVersion()).toEqual({ name: "brand-asset-api", version: "1.0.0" });
    const caps = client.getServerCapabilities();
    expect(caps?.tools).toBeDefined();
    expect(caps?.resources).toBeDefined();
    expect(client.getInstructions()).toContain("search_brands");
  });

  test("the current protocol revision is spoken, older ones are negotiated, unknown ones get the current", async () => {
    const key = await s.key();
    for (const [asked, answered] of [
      [LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION],
      ["2025-03-26", "2025-03-26"],
      ["2024-11-05", "2024-11-05"],
      ["1999-01-01", LATEST_PROTOCOL_VERSION],
    ]) {
      const r = await rpc(initialize(asked as string), { "x-api-key": key });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("application/json");
      // stateless: no session to stick to, any instance can answer the next request
      expect(r.headers.get("mcp-session-id")).toBeNull();
      const body = (await r.json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).toBe(answered as string);
    }
  });

  test("seven tools, each with a title, a description, input and output schemas and the read-only hint", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) {
      expect(tool.title).toBeString();
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.get_logo?.inputSchema.properties?.format).toMatchObject({ enum: ["svg", "png"] });
    expect(byName.search_brands?.inputSchema.required).toEqual(["q"]);
    expect(Object.keys(byName.get_brand?.outputSchema?.properties ?? {})).toContain("_css");
  });

  test("two resource templates: brand://{slug} (JSON) and logo://{slug}/{variant} (SVG)", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => [r.uriTemplate, r.mimeType])).toEqual([
      ["brand://{slug}", "application/json"],
      ["logo://{slug}/{variant}", "image/svg+xml"],
    ]);
    // thousands of brands: no resource list, the templates are the way in
    expect((await client.listResources()).resources).toEqual([]);
  });

  test("logo variants complete from the six names", async () => {
    const r = await client.complete({
      ref: { type: "ref/resource", uri: "logo://{slug}/{variant}" },
      argument: { name: "variant", value: "w" },
    });
    expect(r.completion.values).toEqual(["wordmark"]);
  });
});

describe("every tool and resource, counted exactly like its REST twin", () => {
  let client: Client;
  let key: string;
  beforeAll(async () => {
    key = await s.key("pro");
    client = await connect(s.mcpUrl, { "x-api-key": key });
  });
  afterAll(() => client.close());

  /** Runs `fn` and returns how each bucket's count moved (GET /v1/usage before and after). */
  async function counting(fn: () => Promise<unknown>) {
    const before = await used(s, key);
    await fn();
    return moved(before, await used(s, key));
  }

  test("search_brands: the REST search's matches; one search count", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "search_brands", { q: "  GitHub ", limit: 3 });
      }),
    ).toEqual({ search: 1 });
    const rest = await (await s.get("/v1/search?q=github&limit=3", await s.key("pro"))).json();
    expect(r.isError).toBeUndefined();
    expect(r.structuredContent).toEqual(rest);
    expect((r.structuredContent as { matches: { slug: string }[] }).matches[0]?.slug).toBe(
      "github",
    );
    expect(JSON.parse(textOf(r))).toEqual(rest);
  });

  test("get_brand: the REST catalog entry; one catalog count", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "get_brand", { slug: "GitHub" });
      }),
    ).toEqual({ catalog: 1 });
    const rest = await (await s.get("/v1/catalog/github", await s.key("pro"))).json();
    expect(r.structuredContent).toEqual(rest);
    expect(r.structuredContent).toMatchObject({
      slug: "github",
      _css: { "--brand-color": "#181717" },
    });
    // pro: the catalog bucket has no cap
    expect(r._meta?.quota).toMatchObject({ bucket: "catalog", limit: null, remaining: null });
  });

  test("resolve_brand by domain and by e-mail: the REST brand; one domain count each", async () => {
    let byDomain!: CallToolResult;
    let byEmail!: CallToolResult;
    expect(
      await counting(async () => {
        byDomain = await call(client, "resolve_brand", { domain: "https://docs.stripe.com/api" });
        byEmail = await call(client, "resolve_brand", { email: "jo@stripe.com" });
      }),
    ).toEqual({ domain: 2 });
    const rest = (await (
      await s.get("/v1/brand?domain=stripe.com", await s.key("pro"))
    ).json()) as Record<string, unknown>;
    // the first lookup starts background enrichment (verifiedAt, derived variants), as on REST:
    // compare the fields that enrichment does not fill in
    const { verified: _v, verifiedAt: _va, variants: _vs, ...fixed } = rest;
    expect(byDomain.structuredContent).toMatchObject(fixed);
    expect(byEmail.structuredContent).toMatchObject(fixed);
    expect(Object.keys(byDomain.structuredContent ?? {}).sort()).toEqual(Object.keys(rest).sort());
    expect(byDomain.structuredContent).toMatchObject({ slug: "stripe" });
  });

  test("resolve_transactions: POST /v1/transactions' answer; one batch count", async () => {
    const transactions = [
      { descriptor: "STARBUCKS 1523 OMAHA NE" },
      { descriptor: "SQ *LUCYS LEMONADE STAND", country: "US" },
    ];
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "resolve_transactions", { transactions });
      }),
    ).toEqual({ batch: 1 });
    const rest = (await (
      await fetch(`${s.base}/v1/transactions`, {
        method: "POST",
        headers: { "x-api-key": await s.key("pro"), "content-type": "application/json" },
        body: JSON.stringify({ transactions }),
      })
    ).json()) as { results: { brand: Record<string, unknown> | null; transaction: unknown }[] };
    const got = r.structuredContent as typeof rest;
    expect(got.results.map((x) => x.transaction)).toEqual(rest.results.map((x) => x.transaction));
    expect(got.results.map((x) => x.brand?.slug ?? null)).toEqual(["starbucks", null]);
    expect(r._meta?.quota).toMatchObject({ bucket: "batch" });
  });

  test("get_logo svg: the SVG as text, the served variant stated; one svg count", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "get_logo", { slug: "github", variant: "color" });
      }),
    ).toEqual({ svg: 1 });
    const rest = await s.get("/v1/svg/github?variant=color", await s.key("pro"));
    expect(textOf(r, 0)).toBe(await rest.text());
    expect(r.structuredContent).toEqual({
      slug: "github",
      format: "svg",
      mimeType: "image/svg+xml",
      variant: rest.headers.get("x-svg-variant"),
      requested: "color",
      restricted: false,
      size: null,
      note: expect.stringContaining(`Served the ${rest.headers.get("x-svg-variant")} variant`),
    });
  });

  test("get_logo png: a PNG image of the asked size; one png count", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "get_logo", { slug: "github", format: "png", size: 48 });
      }),
    ).toEqual({ png: 1 });
    const img = r.content[0];
    expect(img?.type).toBe("image");
    if (img?.type !== "image") throw new Error("not an image");
    expect(img.mimeType).toBe("image/png");
    const png = Buffer.from(img.data, "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([48, 48]); // IHDR width, height
    const rest = await s.get("/v1/png/github?size=48", await s.key("pro"));
    expect(png.equals(Buffer.from(await rest.arrayBuffer()))).toBe(true);
    expect(r.structuredContent).toMatchObject({ variant: "mono", format: "png", size: 48 });
  });

  test("list_catalog: the REST page; not metered (like GET /v1/catalog)", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "list_catalog", { limit: 5, offset: 10 });
      }),
    ).toEqual({});
    const rest = await (await s.get("/v1/catalog?limit=5&offset=10", key)).json();
    expect(r.structuredContent).toEqual(rest);
  });

  test("get_usage: GET /v1/usage's report; consumes no bucket", async () => {
    let r!: CallToolResult;
    expect(
      await counting(async () => {
        r = await call(client, "get_usage");
      }),
    ).toEqual({});
    const rest = await (await s.get("/v1/usage", key)).json();
    expect(r.structuredContent).toEqual(rest);
    expect(r.structuredContent).toMatchObject({ tier: "pro", endpoints: { svg: { limit: 2000 } } });
  });

  test("brand://{slug}: the catalog entry as JSON; one catalog count", async () => {
    let r!: Awaited<ReturnType<Client["readResource"]>>;
    expect(
      await counting(async () => {
        r = await client.readResource({ uri: "brand://github" });
      }),
    ).toEqual({ catalog: 1 });
    const rest = await (await s.get("/v1/catalog/github", await s.key("pro"))).json();
    expect(r.contents).toHaveLength(1);
    expect(r.contents[0]).toMatchObject({ uri: "brand://github", mimeType: "application/json" });
    expect(JSON.parse((r.contents[0] as { text: string }).text)).toEqual(rest);
  });

  test("logo://{slug}/{variant}: the SVG; one svg count", async () => {
    let r!: Awaited<ReturnType<Client["readResource"]>>;
    expect(
      await counting(async () => {
        r = await client.readResource({ uri: "logo://github/mono" });
      }),
    ).toEqual({ svg: 1 });
    const rest = await s.get("/v1/svg/github", await s.key("pro"));
    expect(r.contents[0]).toMatchObject({
      uri: "logo://github/mono",
      mimeType: "image/svg+xml",
      text: await rest.text(),
      _meta: { variant: "mono" },
    });
    expect(r._meta?.quota).toMatchObject({ bucket: "svg", limit: 2000 });
  });

  test("errors are tool errors in the REST shape, counted like REST (404, 422 from the handler)", async () => {
    const results: CallToolResult[] = [];
    expect(
      await counting(async () => {
        results.push(await call(client, "get_brand", { slug: "no-such-brand-xyz" }));
        results.push(await call(client, "search_brands", { q: " a " }));
        results.push(await call(client, "resolve_brand", {}));
        results.push(await call(client, "resolve_brand", { email: "someone@gmail.com" }));
        results.push(await call(client, "resolve_brand", { domain: "no-brand-here-xyz.com" }));
        results.push(await call(client, "get_logo", { slug: "no-such-brand-xyz" }));
      }),
    ).toEqual({ catalog: 1, search: 1, domain: 3, svg: 1 });
    expect(results.map((r) => toolErrorBody(r).error)).toEqual([
      "service_not_found",
      "query_too_short",
      "validation_error",
      "email_not_brand_domain",
      "domain_not_found",
      "service_not_found",
    ]);
    for (const r of results) expect(toolErrorBody(r).message).toBeString();
    // the same messages as the REST routes
    const restKey = await s.key("pro");
    for (const [i, path] of [
      [0, "/v1/catalog/no-such-brand-xyz"],
      [3, "/v1/brand?email=someone@gmail.com"],
      [4, "/v1/brand?domain=no-brand-here-xyz.com"],
    ] as const)
      expect(toolErrorBody(results[i] as CallToolResult)).toEqual(
        await (await s.get(path, restKey)).json(),
      );
  });

  test("arguments outside the schema are refused before metering (REST: 422 before the quota)", async () => {
    const results: CallToolResult[] = [];
    expect(
      await counting(async () => {
        results.push(await call(client, "search_brands", { q: "github", limit: 0 }));
        results.push(await call(client, "get_logo", { slug: "github", variant: "sepia" }));
        results.push(await call(client, "get_logo", { slug: "github", format: "png", size: 4096 }));
        results.push(await call(client, "list_catalog", { limit: 201 }));
        results.push(await call(client, "resolve_brand", { domain: "x" }));
      }),
    ).toEqual({});
    for (const r of results) {
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("Input validation error");
    }
  });

  test("resource reads that fail are JSON-RPC errors whose data is the REST body", async () => {
    let err: unknown;
    expect(
      await counting(async () => {
        err = await client.readResource({ uri: "brand://no-such-brand-xyz" }).catch((e) => e);
      }),
    ).toEqual({ catalog: 1 });
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32002);
    expect((err as McpError).data).toEqual({
      error: "service_not_found",
      message: 'No catalog entry with slug "no-such-brand-xyz".',
    });
    // an unknown variant is refused before metering, like GET /v1/svg?variant=sepia
    expect(
      await counting(async () => {
        err = await client.readResource({ uri: "logo://github/sepia" }).catch((e) => e);
      }),
    ).toEqual({});
    expect((err as McpError).data).toMatchObject({ error: "validation_error" });
  });
});

describe("tier rules", () => {
  test("a free key asking for a non-mono logo gets mono, and is told so", async () => {
    const key = await s.key("free");
    const client = await connect(s.mcpUrl, { "x-api-key": key });
    const r = await call(client, "get_logo", { slug: "github", variant: "color" });
    const rest = await s.get("/v1/svg/github?variant=color", await s.key("free"));
    expect(rest.headers.get("x-variant-restricted")).toBe("color");
    expect(textOf(r, 0)).toBe(await rest.text());
    expect(r.structuredContent).toMatchObject({
      variant: "mono",
      requested: "color",
      restricted: true,
    });
    expect(textOf(r, 1)).toBe(
      "Served the mono variant of github (color asked for: the free tier serves mono only).",
    );
    const res = await client.readResource({ uri: "logo://github/color" });
    expect(res.contents[0]?._meta).toMatchObject({ variant: "mono" });
    await client.close();
  });

  test("a free key's cap: the 21st resolve_brand is a tool error carrying rate_limit_exceeded, and consumes nothing", async () => {
    const key = await s.key("free");
    const client = await connect(s.mcpUrl, { "x-api-key": key });
    for (let i = 0; i < 20; i++) {
      const r = await call(client, "resolve_brand", { domain: "github.com" });
      expect(r.isError).toBeUndefined();
      // the REST X-RateLimit-* figures, as _meta.quota
      expect(r._meta?.quota).toEqual({
        bucket: "domain",
        limit: 20,
        remaining: 19 - i,
        reset_in_seconds: expect.any(Number),
      });
    }
    const refused = await call(client, "resolve_brand", { domain: "github.com" });
    const body = toolErrorBody(refused);
    expect(body).toEqual({
      error: "rate_limit_exceeded",
      message:
        "Daily limit of 20 domain requests reached for the free tier. It resets at 00:00 UTC; upgrade for higher limits.",
      reset_in_seconds: expect.any(Number),
      upgrade_url: s.deps.config.UPGRADE_URL,
    });
    expect(body.reset_in_seconds as number).toBeGreaterThan(0);
    expect(body.reset_in_seconds as number).toBeLessThanOrEqual(86_400);
    // the same counter as REST: GET /v1/brand is refused too, and the refusals consumed nothing
    await expectError(await s.get("/v1/brand?domain=github.com", key), 429, "rate_limit_exceeded");
    expect((await used(s, key)).domain).toBe(20);
    // other buckets are untouched
    expect((await call(client, "get_brand", { slug: "github" })).isError).toBeUndefined();
    await client.close();
  });

  test("resources over the cap: a JSON-RPC error whose data carries rate_limit_exceeded", async () => {
    const { apiKey } = await createEnterprise(s, { catalog: 1 });
    const client = await connect(s.mcpUrl, { "x-api-key": apiKey });
    await client.readResource({ uri: "brand://github" });
    const err = (await client.readResource({ uri: "brand://github" }).catch((e) => e)) as McpError;
    expect(err).toBeInstanceOf(McpError);
    expect(err.data).toMatchObject({
      error: "rate_limit_exceeded",
      upgrade_url: s.deps.config.UPGRADE_URL,
      reset_in_seconds: expect.any(Number),
    });
    await client.close();
  });
});

describe("usage events", () => {
  test("each metered call leaves one event with the REST twin's status; refusals are 429 events", async () => {
    const { accountId, apiKey } = await createEnterprise(s, { svg: 2 });
    const client = await connect(s.mcpUrl, { "x-api-key": apiKey });
    await call(client, "get_logo", { slug: "github", variant: "color" });
    await call(client, "get_logo", { slug: "no-such-brand-xyz" });
    await call(client, "get_logo", { slug: "github" }); // over the cap of 2
    await call(client, "list_catalog", {}); // not metered
    await client.close();
    await s.deps.usage.flush();
    const day = new Date().toISOString().slice(0, 10);
    const events = await accountEvents(s.deps.store.usage, accountId, day);
    expect(events.map((e) => [e.bucket, e.route, e.slug, e.variant, e.status])).toEqual([
      ["svg", "mcp:get_logo", "github", "color", 200],
      ["svg", "mcp:get_logo", "no-such-brand-xyz", "mono", 404],
      ["svg", "mcp:get_logo", "github", "mono", 429],
    ]);
    expect(events.every((e) => e.tier === "enterprise" && e.keyId !== "")).toBe(true);
  });
});

describe("authentication, before any MCP processing", () => {
  test("no credentials: 401 invalid_api_key in the spec's shape, even for a malformed body", async () => {
    for (const body of [initialize(LATEST_PROTOCOL_VERSION), "{not json"]) {
      const r = await rpc(body, {});
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({
        error: "invalid_api_key",
        message: "Missing or invalid API key. Pass your key in the X-API-Key header.",
      });
    }
  });

  test("a wrong key, a revoked-looking key or an unknown bearer token: 401", async () => {
    const attempts: Record<string, string>[] = [
      { "x-api-key": "bak_0000000000000000_wrongwrongwrongwrongwrongwrongwr" },
      { authorization: "Bearer bak_0000000000000000_wrongwrongwrongwrongwrongwrongwr" },
      { authorization: "Bearer not-a-token" },
    ];
    for (const headers of attempts) {
      const r = await rpc(initialize(LATEST_PROTOCOL_VERSION), headers);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
    }
  });

  test("the SDK client without a key cannot connect", async () => {
    const err = await connect(s.mcpUrl, {}).catch((e) => e);
    expect(String(err)).toContain("invalid_api_key");
  });

  test("Authorization: Bearer <api key> works like X-API-Key, on the same counters", async () => {
    const key = await s.key("free");
    const client = await connect(s.mcpUrl, { authorization: `Bearer ${key}` });
    const before = await used(s, key);
    const r = await call(client, "get_brand", { slug: "github" });
    expect(r.structuredContent).toMatchObject({ slug: "github" });
    expect(moved(before, await used(s, key))).toEqual({ catalog: 1 });
    await client.close();
  });

  test("a bearer access token (JWT hook) counts on the account's active key", async () => {
    const issued = await s.deps.accounts.createAccountWithKey({ tier: "free" });
    const client = await connect(s.mcpUrl, { authorization: `Bearer acct:${issued.accountId}` });
    const before = await used(s, issued.apiKey);
    await call(client, "search_brands", { q: "stripe" });
    expect(moved(before, await used(s, issued.apiKey))).toEqual({ search: 1 });
    await client.close();
  });

  test("GET and DELETE /mcp: 405 with Allow: POST (stateless: no stream, no session); 401 first", async () => {
    const key = await s.key();
    for (const method of ["GET", "DELETE"]) {
      const r = await fetch(s.mcpUrl, {
        method,
        headers: { "x-api-key": key, accept: "text/event-stream" },
      });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
      expect(((await r.json()) as { jsonrpc: string }).jsonrpc).toBe("2.0");
      await expectError(await fetch(s.mcpUrl, { method }), 401, "invalid_api_key");
    }
  });

  test("a body over 64 KiB is refused before it is read", async () => {
    const big = { ...initialize(LATEST_PROTOCOL_VERSION), pad: "x".repeat(70_000) };
    const r = await rpc(big, { "x-api-key": await s.key() });
    expect(r.status).toBe(413);
    // the JSON-RPC error shape MCP clients read, as for every transport-level refusal
    const err = (await r.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(err).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    expect(err.error.message).toMatch(/65536 bytes/);
  });
});

describe("transport-level errors: the JSON-RPC shape MCP clients expect, clear 4xx, nothing counted", () => {
  test("bad JSON 400, missing Accept 406, wrong Content-Type 415, unsupported protocol header 400; a notification 202", async () => {
    const key = await s.key("free");
    const before = await used(s, key);
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const post = (body: string, headers: Record<string, string>) =>
      fetch(s.mcpUrl, { method: "POST", headers: { "x-api-key": key, ...headers }, body });
    const json = { "content-type": "application/json" };
    const accept = { accept: "application/json, text/event-stream" };
    for (const [body, headers, status, code] of [
      ["{nope", { ...json, ...accept }, 400, -32700],
      [ping, json, 406, -32000],
      [ping, { "content-type": "text/plain", ...accept }, 415, -32000],
      [ping, { ...json, ...accept, "mcp-protocol-version": "1999-01-01" }, 400, -32000],
    ] as const) {
      const r = await post(body, headers);
      expect(r.status).toBe(status);
      const err = (await r.json()) as { jsonrpc: string; error: { code: number; message: string } };
      expect(err.jsonrpc).toBe("2.0");
      expect(err.error.code).toBe(code);
      expect(err.error.message.length).toBeGreaterThan(10);
    }
    const note = await post(
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      {
        ...json,
        ...accept,
      },
    );
    expect(note.status).toBe(202);
    const unknown = await post(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "nope/nope" }), {
      ...json,
      ...accept,
    });
    expect(((await unknown.json()) as { error: { code: number } }).error.code).toBe(-32601);
    expect(moved(before, await used(s, key))).toEqual({});
  });
});

describe("OpenAPI", () => {
  test("POST /mcp is documented (JSON-RPC body, API key or bearer); GET and DELETE are not", async () => {
    const doc = (await (await s.req("/swagger/json")).json()) as {
      paths: Record<string, Record<string, { description: string; security: unknown }>>;
    };
    const mcp = doc.paths["/mcp"];
    expect(Object.keys(mcp ?? {})).toEqual(["post"]);
    expect(mcp?.post?.description).toContain("docs/mcp.md");
    expect(mcp?.post?.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
  });
});
