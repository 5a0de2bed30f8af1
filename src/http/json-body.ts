import { ApiError } from "./errors";

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
