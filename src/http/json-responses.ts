import { type Static, type TSchema, t } from "elysia";
import { ErrorBody } from "./errors";

/** The content type Elysia gives JSON it serializes; pre-serialized bodies send the same. */
export const JSON_TYPE = "application/json;charset=utf-8";

/**
 * The `response` schema of a route answering pre-serialized JSON text: validated as a string,
 * typed as the JSON it holds (so Eden's treaty client sees the real type).
 */
export const preSerialized = <S extends TSchema>(_schema: S) => t.Unsafe<Static<S>>(t.String());

/** An OpenAPI response entry with a JSON body (for routes that document `responses` by hand). */
export function jsonResponse(description: string, schema: TSchema = ErrorBody) {
  return { description, content: { "application/json": { schema } } };
}

/**
 * detail.responses for a route answering pre-serialized JSON (its `response` is t.String() for
 * 200): the OpenAPI responses Elysia generates from these schemas (the schema's description
 * becomes the response's; its top-level additionalProperties is left out), so the document
 * stays the same.
 */
export function documentedResponses(schemas: Record<number, TSchema>) {
  const out: Record<string, ReturnType<typeof jsonResponse>> = {};
  for (const [status, s] of Object.entries(schemas)) {
    const { description, additionalProperties: _, ...schema } = s;
    const content = { "application/json": { schema: schema as TSchema } };
    // without one, normalizeOpenApi (src/http/openapi.ts) describes the status, as it does now
    out[status] = (description ? { description, content } : { content }) as (typeof out)[string];
  }
  return out;
}
