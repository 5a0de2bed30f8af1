import { Elysia } from "elysia";
import { type Operators, requireOperator } from "../../guard";
import { cappedBody } from "../../http/body-limits";
import { type ArtworkInput, badInput, PIN_MAX_BYTES } from "../pin-artwork";
import type { CorrectionsService } from "../service";

export interface CorrectionsAdminDeps {
  corrections: CorrectionsService;
  operators: Operators;
}

const IMAGE_TYPES: Record<string, "svg" | "png"> = { "image/svg+xml": "svg", "image/png": "png" };

/**
 * The body of PUT .../artwork/{variant}: SVG or PNG bytes (read up to PIN_MAX_BYTES, 400
 * invalid_pin beyond), or JSON `{ "url": ... }` (the small-body cap).
 */
async function artworkBody(request: Request): Promise<ArtworkInput | unknown> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  const kind = IMAGE_TYPES[type ?? ""];
  if (!kind) return cappedBody(request);
  const tooLarge = () => badInput("invalid_pin", "body", `Artwork over ${PIN_MAX_BYTES} bytes.`);
  if (Number(request.headers.get("content-length")) > PIN_MAX_BYTES) throw tooLarge();
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > PIN_MAX_BYTES) throw tooLarge();
  return { kind, bytes };
}

/**
 * The base of the corrections' operator routes (mounted with the other /admin routes when
 * ADMIN_TOKEN is set): the operator's token is checked before the body is parsed (parse) and
 * before it is validated (transform; routes without a body), so a caller without it learns
 * nothing of the routes' rules.
 */
export function operatorRoutes(deps: CorrectionsAdminDeps) {
  return new Elysia({ prefix: "/admin", tags: ["admin"] })
    .onParse(({ request }) => {
      requireOperator(request, deps.operators);
      return artworkBody(request);
    })
    .onTransform(({ request }) => {
      requireOperator(request, deps.operators);
    });
}

/** The operator's identity, recorded with what they change. */
export const operatorOf = (deps: CorrectionsAdminDeps) => (request: Request) =>
  requireOperator(request, deps.operators);
