import { type CallToolResult, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { httpError } from "../http/errors";
import { log } from "../platform/log";
import type { QuotaDecision } from "../quota/gate";
import type { Bucket } from "../quota/limits";

/**
 * How MCP answers are shaped: a tool's result (structured content and its JSON text, the quota
 * as `_meta.quota`), a refusal as the REST error body (its status from http/errors.ts), a failed
 * resource read as a JSON-RPC error.
 */

export type Body = Record<string, unknown>;

/** An MCP tool error carrying the REST error body ({error, message}, + reset_in_seconds, upgrade_url on 429). */
export function toolError(body: Body): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] };
}

const INTERNAL = { error: "internal_error", message: "Internal server error" };

export function errorBody(err: unknown): Body {
  const answer = httpError(err);
  if (answer) return answer.body();
  log("error", "mcp call failed", { error: err instanceof Error ? err.message : String(err) });
  return INTERNAL;
}

/** A successful tool result: structuredContent plus its JSON as text (for clients without structured output). */
export function ok(structured: Body, quota?: QuotaMeta): CallToolResult {
  return {
    structuredContent: structured,
    content: [{ type: "text", text: JSON.stringify(structured) }],
    ...(quota && { _meta: { quota } }),
  };
}

/** The REST X-RateLimit-* headers of a metered call, as the result's `_meta.quota`. */
export interface QuotaMeta {
  bucket: Bucket;
  /** daily cap; null when uncapped */
  limit: number | null;
  /** calls left today; null when uncapped */
  remaining: number | null;
  /** seconds until the counters reset (00:00 UTC) */
  reset_in_seconds: number;
}

export function quotaMeta(bucket: Bucket, d: QuotaDecision): QuotaMeta {
  return {
    bucket,
    limit: d.limit,
    remaining: d.limit === null ? null : Math.max(0, d.remaining ?? 0),
    reset_in_seconds: d.resetSeconds,
  };
}

/**
 * A JSON-RPC error for a failed resource read (code and data as given; unlike McpError, the
 * message is not prefixed with the code).
 */
class ResourceReadError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Body,
  ) {
    super(message);
  }
}

/** A resource read that failed, as a JSON-RPC error whose data is the REST error body. */
export function resourceError(err: unknown): ResourceReadError {
  const body = errorBody(err);
  const status = httpError(err)?.status ?? 500;
  const code =
    status === 404
      ? -32002 // MCP: resource not found
      : status === 422
        ? ErrorCode.InvalidParams
        : ErrorCode.InternalError;
  // 429: a server-defined code; data carries rate_limit_exceeded, reset_in_seconds, upgrade_url
  return new ResourceReadError(status === 429 ? -32029 : code, String(body.message), body);
}
