import { ApiError } from "./errors";

/** Largest request body an authenticated JSON route reads (a 50-slug batch is under 11 KiB). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The runtime's own cap on a request body (Bun.serve maxRequestBodySize, src/main.ts). Past it
 * the runtime answers 413 with an empty body; below it the routes answer their JSON 413.
 */
export const RUNTIME_BODY_LIMIT = 8 * 1024 * 1024;

const tooLarge = () =>
  new ApiError(
    413,
    "payload_too_large",
    `Request body over ${MAX_BODY_BYTES} bytes; this route takes a small JSON object.`,
  );

/** A body sent without Content-Length (chunked), read up to MAX_BODY_BYTES, as JSON. */
async function readChunkedJson(body: ReadableStream<Uint8Array>): Promise<unknown> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return parseJsonBody(new TextDecoder().decode(Buffer.concat(chunks)));
}

/**
 * A parse hook's body reader for small JSON routes: a declared body over MAX_BODY_BYTES is 413;
 * a chunked one (no Content-Length) is read here up to that cap (413 past it). A JSON body is
 * returned parsed, refused with 422 when it nests deeper than MAX_JSON_DEPTH (before any schema
 * sees it) or is malformed; other content types are left to the route's parser (undefined).
 */
export function cappedBody(request: Request): Promise<unknown> | undefined {
  const declared = request.headers.get("content-length");
  if (Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  if (!request.body) return undefined;
  if (declared === null) return readChunkedJson(request.body);
  if (isJson(request)) return request.text().then(parseJsonBody);
}

/**
 * Deepest nesting of arrays and objects a JSON request body may have. The service's bodies
 * nest two or three levels; a deeper one is refused before it is parsed or validated (schema
 * validation and its error reporting recurse, and a few thousand levels exhaust the stack).
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** Whether `text` (JSON, valid or not) opens more than `max` arrays/objects at once. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

export const tooDeep = () =>
  new ApiError(
    422,
    "validation_error",
    `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
  );

/** A JSON request body's text, parsed: undefined when blank, 422 when too deep or malformed. */
export function parseJsonBody(text: string): unknown {
  if (!text.trim()) return undefined;
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(422, "validation_error", "Request body is not valid JSON");
  }
}

/** Whether the request says its body is JSON (`application/json`, parameters ignored). */
export function isJson(request: Request): boolean {
  const type = request.headers.get("content-type");
  return type?.trimStart().toLowerCase().startsWith("application/json") === true;
}
