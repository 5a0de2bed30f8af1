import type { TObject, TSchema } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { invalid } from "../platform/domain-errors";

/**
 * An integer query parameter whose validation error names the field and its range
 * (Elysia's own message for coerced query numbers does not name the field).
 */
export function queryInt(name: string, min: number, max: number | null, def?: number) {
  const range = max === null ? `>= ${min}` : `from ${min} to ${max}`;
  return t.Integer({
    minimum: min,
    ...(max === null ? {} : { maximum: max }),
    ...(def === undefined ? {} : { default: def }),
    description: `Integer ${range} written in decimal digits (no sign, exponent, fraction or 0x)${def === undefined ? "" : `, default ${def}`}`,
    error: `Invalid query parameter ${name}: must be an integer ${range}`,
  });
}

/** A string enum parameter with a message listing the allowed values. */
export function queryEnum<T extends string>(name: string, values: readonly T[], def?: T) {
  return t.Union(
    values.map((v) => t.Literal(v)),
    {
      ...(def === undefined ? {} : { default: def }),
      description: `One of ${values.join(", ")}${def ? `; default ${def}` : ""}`,
      error: `Invalid query parameter ${name}: must be one of ${values.join(", ")}`,
    },
  );
}

const DECIMAL = /^\d+$/;

/**
 * A `transform` hook for a route whose query schema has `queryInt` fields: a value not written
 * as plain decimal digits is refused with that field's 422 message. Elysia's coercion would
 * otherwise read "0x10" as 16, "1e2" as 100, "0b11" as 3, and " 10" or "10.0" as 10. Runs on the
 * raw strings, before coercion and validation; like any schema failure it consumes no quota.
 */
function decimalIntegers(schema: TObject) {
  // Elysia's t.Integer is a union of an integer and a numeric string: look inside it
  const isInteger = (s: TSchema): boolean =>
    s.type === "integer" || (Array.isArray(s.anyOf) && s.anyOf.some(isInteger));
  const fields = Object.entries(schema.properties as Record<string, TSchema>)
    .filter(([, s]) => isInteger(s))
    .map(([name, s]) => [name, String(s.error)] as const);
  return ({ query }: { query: Record<string, unknown> }) => {
    for (const [name, error] of fields) {
      const v = query[name];
      if (typeof v === "string" && !DECIMAL.test(v)) throw invalid(error);
    }
  };
}

/**
 * Route macro `decimalQuery: <query schema>`: the check above as a `transform` hook. Macros run
 * in the order of their keys, so list it after `apiKey` / `keyOrBearer` / `metered`: a caller
 * without a valid key then still gets 401, never a 422 (tests/http/query-integers.test.ts).
 */
export const decimalQuery = new Elysia({ name: "decimal-query" }).macro({
  decimalQuery: (schema: TObject) => ({ transform: decimalIntegers(schema) }),
});
