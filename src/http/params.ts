import { t } from "elysia";

/**
 * An integer query parameter whose validation error names the field and its range
 * (Elysia's own message for coerced query numbers does not name the field).
 */
export function queryInt(name: string, min: number, max: number | null, def: number) {
  const range = max === null ? `>= ${min}` : `from ${min} to ${max}`;
  return t.Integer({
    minimum: min,
    ...(max === null ? {} : { maximum: max }),
    default: def,
    description: `Integer ${range}, default ${def}`,
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
