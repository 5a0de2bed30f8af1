import { Elysia } from "elysia";
import { serviceNotFound } from "../platform/domain-errors";
import { log } from "../platform/log";
import { type ApiError, httpError, isStorageFull, storageUnavailable } from "./errors";
import { runFinal } from "./final-status";

interface ValueErrorLike {
  path?: string;
  message?: string;
}

/** "query parameter limit: Expected integer to be less or equal to 200" */
function describeValidation(error: unknown): string {
  const e = error as {
    type?: string;
    customError?: unknown;
    valueError?: ValueErrorLike;
    all?: ValueErrorLike[];
  };
  if (typeof e.customError === "string") return e.customError;
  const first = e.valueError ?? e.all?.[0];
  const where =
    e.type === "query"
      ? "query parameter"
      : e.type === "params"
        ? "path parameter"
        : e.type === "headers"
          ? "header"
          : "body field";
  const field = (first?.path ?? "").replace(/^\//, "").replaceAll("/", ".");
  if (e.type === "body" && !field) return `Request body: ${first?.message ?? "invalid"}`;
  return `Invalid ${where} ${field || "(unknown)"}: ${first?.message ?? "invalid value"}`;
}

/** A validation error on the `slug` path parameter (catalog, SVG, PNG, WebP routes). */
function isSlugParam(error: unknown): boolean {
  const e = error as { type?: string; valueError?: ValueErrorLike };
  return e.type === "params" && e.valueError?.path === "/slug";
}

/** Maps every error to { error, message } with the spec's codes; no stack traces ever leave. */
export const errorPlugin = new Elysia({ name: "error-plugin" }).onError(
  { as: "global" },
  ({ code, error: thrown, set, request }) => {
    // a hook that runs while the body is parsed (credential checks) arrives as a PARSE error
    const cause = code === "PARSE" ? (thrown as { cause?: unknown }).cause : undefined;
    const unwrapped = httpError(cause) ? cause : thrown;
    // a slug over the length cap, or not decodable, names no catalog entry: 404 like any
    // other unknown slug (credentials were checked before validation)
    const storage = isStorageFull(unwrapped);
    // the operator's line: what the store said (with what to do about it), once per refusal
    if (storage)
      log("error", "storage unavailable: write refused, answered 503", {
        path: new URL(request.url).pathname,
        code: (unwrapped as { code?: string }).code,
        error: (unwrapped as Error).message,
      });
    const error =
      code === "VALIDATION" && isSlugParam(unwrapped)
        ? serviceNotFound()
        : storage
          ? storageUnavailable()
          : unwrapped;
    // the one place an error becomes a status: a domain error by its kind (http/errors.ts)
    const answer = httpError(error);
    let status = 500;
    let body: Record<string, unknown>;
    if (answer) {
      status = answer.status;
      body = answer.body();
      Object.assign(set.headers, answer.headers);
    } else if (code === "VALIDATION" && (error as { type?: string }).type !== "response") {
      status = 422;
      body = { error: "validation_error", message: describeValidation(error) };
    } else if (code === "PARSE") {
      status = 422;
      body = { error: "validation_error", message: "Request body is not valid JSON" };
    } else if (code === "NOT_FOUND") {
      status = 404;
      const url = new URL(request.url);
      body = { error: "not_found", message: `No route for ${request.method} ${url.pathname}` };
    } else {
      log("error", "unhandled error", {
        path: new URL(request.url).pathname,
        code: String(code),
        error: error instanceof Error ? error.message : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      body = { error: "internal_error", message: "Internal server error" };
    }
    set.status = status;
    set.headers["content-type"] = "application/json";
    // a metered request that ends here (429, 404, 500, ...) records its usage event now;
    // with USAGE_DURABILITY=strict the answer waits until it is durable
    const durable = runFinal(request, status);
    if (!durable) return body;
    // its event was dropped (neither written nor spilled): 503 storage_unavailable instead
    return durable.then(
      () => body,
      (e: ApiError) => {
        set.status = e.status;
        Object.assign(set.headers, e.headers);
        return e.body();
      },
    );
  },
);
