import { Elysia } from "elysia";
import { ApiError } from "./errors";

/** Longest request target (path and query) served: longer gets 414 uri_too_long. */
export const MAX_URL_BYTES = 8 * 1024;
/** Largest header section served (names and values): larger gets 431 headers_too_large. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * The runtime's own cap on the request line and headers (`bun --max-http-header-size`, set by
 * `npm start`). Below it the service answers the JSON 414 and 431 above; past it the runtime
 * answers 431 itself, with an empty body, before any code of the service runs.
 */
export const RUNTIME_HEADER_LIMIT = 128 * 1024;
/**
 * Most header fields Bun's HTTP parser takes in one request (Host included). It is a
 * compile-time size of the parser's header table, not a setting: a request with more fields is
 * answered 431 with an empty body by the runtime, before any code of the service runs.
 */
export const RUNTIME_HEADER_COUNT_LIMIT = 198;

/**
 * Refuses over-long URLs and header sections in the `{error, message}` shape. Bun's default
 * cap (16 KiB) would answer them first with an empty 431, so the entry point raises it to
 * RUNTIME_HEADER_LIMIT and these limits take over below it.
 */
export const requestLimits = new Elysia({ name: "request-limits" }).onRequest(({ request }) => {
  const url = request.url;
  // the target is what follows the origin ("http://host:port")
  const target = url.length - url.indexOf("/", url.indexOf("//") + 2);
  if (target > MAX_URL_BYTES)
    throw new ApiError(
      414,
      "uri_too_long",
      `Request URL over ${MAX_URL_BYTES} bytes; send long lists in a request body (POST /v1/catalog/batch).`,
    );
  let size = 0;
  request.headers.forEach((value, name) => {
    size += name.length + value.length + 4;
  });
  if (size > MAX_HEADER_BYTES)
    throw new ApiError(
      431,
      "headers_too_large",
      `Request headers over ${MAX_HEADER_BYTES} bytes in all.`,
    );
});
