import { Elysia } from "elysia";
import type { AuthDeps } from "../guard";
import { authenticate } from "../guard";
import type { Principal } from "../quota/principal";
import type { McpDeps, McpService } from "./service";

/**
 * The caller of an /mcp request: X-API-Key, or Authorization: Bearer with an API key (clients
 * that can only set a bearer) or an access token (JWT, through deps.verifyBearer). Else 401.
 */
const mcpCaller = (deps: AuthDeps, headers: Headers): Promise<Principal> =>
  authenticate(deps, headers, "token-or-key");

const METHOD_NOT_ALLOWED = JSON.stringify({
  jsonrpc: "2.0",
  error: { code: -32000, message: "Method not allowed: this stateless server answers POST only." },
  id: null,
});

/** A transport-level refusal: a JSON-RPC error object, the shape MCP clients expect. */
const rpcError = (description: string) => ({
  description,
  content: {
    "application/json": { schema: { type: "object" as const, description: "A JSON-RPC error" } },
  },
});

const DESCRIPTION =
  "Model Context Protocol server (Streamable HTTP transport, stateless, JSON responses) for AI agents: " +
  "tools search_brands, get_brand, resolve_brand, get_logo, list_catalog, get_usage and resource templates " +
  "brand://{slug} and logo://{slug}/{variant}. The body is a JSON-RPC 2.0 message; send Accept: application/json, text/event-stream. " +
  "Credentials: X-API-Key, or Authorization: Bearer with an API key or an access token; checked before any MCP " +
  "processing (401 invalid_api_key). Every call counts against the key's daily quota exactly like its REST twin; " +
  "over the cap a tool answers an MCP tool error carrying rate_limit_exceeded, reset_in_seconds and upgrade_url. " +
  "GET and DELETE /mcp answer 405 (no server-initiated streams, no sessions). See docs/mcp.md.";

/** POST /mcp (MCP Streamable HTTP); GET and DELETE answer 405 Method Not Allowed. */
export function mcpController(deps: AuthDeps & McpDeps) {
  // The MCP SDK (and zod) are loaded on the first /mcp request, not at start-up: they would add
  // about as much module loading again as the rest of the app, for every instance and test.
  let mcp: Promise<McpService> | undefined;
  const service = () => {
    mcp ??= import("./service").then((m) => new m.McpService(deps));
    return mcp;
  };
  const refuse = async ({ request }: { request: Request }) => {
    await mcpCaller(deps, request.headers);
    return new Response(METHOD_NOT_ALLOWED, {
      status: 405,
      headers: { allow: "POST", "content-type": "application/json" },
    });
  };
  return new Elysia({ tags: ["mcp"] })
    .post(
      "/mcp",
      async ({ request }) => {
        const caller = await mcpCaller(deps, request.headers);
        return (await service()).handle(request, caller);
      },
      {
        // the transport reads (and bounds) the body itself, after authentication
        parse: "none",
        detail: {
          summary: "MCP server (Streamable HTTP) for AI agents",
          description: DESCRIPTION,
          security: [{ apiKey: [] }, { bearer: [] }],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { type: "object", description: "A JSON-RPC 2.0 request or notification" },
              },
            },
          },
          responses: {
            200: {
              description: "The JSON-RPC response",
              content: { "application/json": { schema: { type: "object" } } },
            },
            202: { description: "Accepted (the message was a notification or a response)" },
            400: rpcError("Not a valid JSON-RPC message, or an unsupported protocol version"),
            401: {
              description: "invalid_api_key: missing or invalid credentials",
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["error", "message"],
                    properties: { error: { type: "string" }, message: { type: "string" } },
                  },
                },
              },
            },
            406: rpcError("The Accept header lacks application/json or text/event-stream"),
            413: rpcError("Body over 64 KiB"),
            415: rpcError("The body is not application/json"),
          },
        },
      },
    )
    .get("/mcp", refuse, { detail: { hide: true } })
    .delete("/mcp", refuse, { detail: { hide: true } });
}
