import { expect } from "bun:test";

/** An error answer's body: `{error, message}` (src/http/errors.ts), plus any extra fields. */
export type ErrorAnswer = { error: string; message: string } & Record<string, unknown>;

/**
 * Assert that `r` is the error answer `status` with code `error`; with `mentions`, that its
 * message names it (a validation error names the parameter or field). Returns the body.
 */
export async function expectError(
  r: Response,
  status: number,
  error: string,
  mentions?: string,
): Promise<ErrorAnswer> {
  expect(r.status).toBe(status);
  const body = (await r.json()) as ErrorAnswer;
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe("string");
  if (mentions !== undefined) expect(body.message).toContain(mentions);
  return body;
}
