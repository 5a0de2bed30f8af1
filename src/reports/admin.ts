import { Elysia, t } from "elysia";
import { VariantName } from "../catalog/model";
import type { Variant } from "../catalog/types";
import { requireOperator } from "../guard";
import { cappedBody } from "../http/body-limits";
import { ApiError, ErrorBody } from "../http/errors";
import {
  AcceptBody,
  Accepted,
  AuditEventView,
  AuditQuery,
  BrandPatchBody,
  PinView,
  ReportRecord,
  ReportStatusQuery,
  ReportView,
} from "./model";
import type { PinField } from "./port";
import { type ArtworkInput, type CorrectionsService, PIN_MAX_BYTES, pinView } from "./service";

/** Who made a change: "admin", or "admin:<name>" when the operator sends X-Operator. */
export function operatorLabel(request: Request): string {
  const name = request.headers.get("x-operator")?.trim() ?? "";
  return /^[\w.@-]{1,64}$/.test(name) ? `admin:${name}` : "admin";
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
  const tooLarge = () =>
    new ApiError(400, "invalid_pin", `Artwork over ${PIN_MAX_BYTES} bytes.`, { field: "body" });
  if (Number(request.headers.get("content-length")) > PIN_MAX_BYTES) throw tooLarge();
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > PIN_MAX_BYTES) throw tooLarge();
  return { kind, bytes };
}

const SlugParams = t.Object({ slug: t.String({ maxLength: 200 }) });
const ArtworkParams = t.Object({ slug: t.String({ maxLength: 200 }), variant: VariantName });

/**
 * Operator routes for corrections (mounted with the other /admin routes when ADMIN_TOKEN is
 * set): the report queue, pinned artwork and fields, pins in force, a brand's audit trail.
 */
export function correctionsAdminController(deps: {
  corrections: CorrectionsService;
  adminToken: string;
}) {
  const { corrections } = deps;
  return new Elysia({ prefix: "/admin", tags: ["admin"] })
    .onParse(({ request }) => {
      requireOperator(request, deps.adminToken);
      return artworkBody(request);
    })
    .onTransform(({ request }) => {
      requireOperator(request, deps.adminToken);
    })
    .get(
      "/reports",
      async ({ query }) => ({
        items: (await corrections.reports(query.status, query.limit ?? 100)).map((r) =>
          corrections.reportView(r),
        ),
      }),
      {
        query: ReportStatusQuery,
        response: { 200: t.Object({ items: t.Array(ReportView) }), 401: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "The report queue (operator)",
          description:
            "Newest first, optionally of one status (open, accepted, rejected), at most `limit` (default 100). Each report carries its votes and the brand's current artwork: per variant its source and sha256, the provenance entries, and the pins in force.",
        },
      },
    )
    .post(
      "/reports/:id/accept",
      ({ params, body, request }) =>
        corrections.accept(params.id, operatorLabel(request), {
          pin: body?.pin,
          variant: body?.variant as Variant | undefined,
        }),
      {
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        body: AcceptBody,
        response: {
          200: Accepted,
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Accept a report (operator)",
          description:
            "With `{ \"pin\": true }` the report's url is fetched now (discovery's guarded fetcher: public addresses only, size and time caps) and pinned as the brand's `variant` (default color) in the same step; artwork that cannot be fetched or is not a usable SVG or PNG is 400 invalid_pin and the report stays open. 409 report_decided for a report accepted or rejected already.",
        },
      },
    )
    .post(
      "/reports/:id/reject",
      ({ params, request }) => corrections.reject(params.id, operatorLabel(request)),
      {
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        response: {
          200: ReportRecord,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          422: ErrorBody,
        },
        detail: { summary: "Reject a report (operator)" },
      },
    )
    .put(
      "/brands/:slug/artwork/:variant",
      async ({ params, body, request, query }) => {
        const input = artworkInput(body);
        const pin = await corrections.pinArtwork(
          params.slug,
          params.variant as Variant,
          input,
          operatorLabel(request),
          { why: query.why ?? null },
        );
        return pinView(pin);
      },
      {
        params: ArtworkParams,
        query: t.Object({ why: t.Optional(t.String({ maxLength: 1000 })) }),
        response: {
          200: PinView,
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Pin a brand's artwork for one variant (operator)",
          description:
            'The body is the artwork (Content-Type image/svg+xml or image/png, at most 1 MiB) or JSON `{ "url": "https://..." }`, fetched through discovery\'s guarded fetcher. The SVG is sanitized and optimized like every mark; SVG with script, event handlers or foreignObject is refused (400 invalid_pin), as is a PNG body that is no PNG. A single-colour mark pinned as mono or color gives mono (black), dark and light derived by the artwork rules; multi-colour color artwork serves dark and light as it is. The pin beats the built catalog and discovery, survives catalog reloads and rediscovery, and leaves an audit event. `why` (query) is kept with it.',
          requestBody: {
            required: true,
            content: {
              "image/svg+xml": { schema: { type: "string" } },
              "image/png": { schema: { type: "string", format: "binary" } },
              "application/json": {
                schema: {
                  type: "object",
                  properties: { url: { type: "string" } },
                  required: ["url"],
                },
              },
            },
          },
        },
      },
    )
    .delete(
      "/brands/:slug/artwork/:variant",
      ({ params, request }) =>
        corrections.unpinArtwork(params.slug, params.variant as Variant, operatorLabel(request)),
      {
        params: ArtworkParams,
        response: { 200: PinView, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Remove a variant's pinned artwork (operator)",
          description:
            "The brand's artwork from the catalog (or discovery) is served again. 404 pin_not_found when the variant has no pin.",
        },
      },
    )
    .patch(
      "/brands/:slug",
      async ({ params, body, request }) => {
        const by = operatorLabel(request);
        const { why, ...fields } = body;
        const set = await corrections.patchBrand(
          params.slug,
          {
            name: fields.name ?? undefined,
            brandColor: fields.brandColor ?? undefined,
            domains: fields.domains ?? undefined,
            aliases: fields.aliases ?? undefined,
            why,
          },
          by,
        );
        const removed = [];
        for (const [field, value] of Object.entries(fields))
          if (value === null)
            removed.push(await corrections.unpinField(params.slug, field as PinField, by));
        return { pinned: set.map((p) => pinView(p)), removed };
      },
      {
        params: SlugParams,
        body: BrandPatchBody,
        response: {
          200: t.Object({ pinned: t.Array(PinView), removed: t.Array(PinView) }),
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "Pin a brand's name, colour, domains or aliases (operator)",
          description:
            "Each field given is pinned (null removes that field's pin). Pinned domains answer GET /v1/brand for this brand, before any other brand that has them in the catalog (a domain re-assigned). A pinned brandColor brings its dark-mode and contrast-text colours.",
        },
      },
    )
    .get("/pins", async () => ({ items: await corrections.pins() }), {
      response: { 200: t.Object({ items: t.Array(PinView) }), 401: ErrorBody },
      detail: { summary: "Every pin in force (operator)" },
    })
    .get(
      "/brands/:slug/audit",
      async ({ params, query }) => ({
        items: await corrections.auditOf(params.slug, query.limit ?? 100),
      }),
      {
        params: SlugParams,
        query: AuditQuery,
        response: {
          200: t.Object({ items: t.Array(AuditEventView) }),
          401: ErrorBody,
          404: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          summary: "A brand's audit trail (operator)",
          description:
            "Newest first: pins set and removed, reports accepted and rejected, discovered artwork stored, takedowns, and catalog build versions (brandId null: they concern every brand).",
        },
      },
    );
}

/** The parsed body as artwork input; anything else is 400 invalid_pin. */
function artworkInput(body: unknown): ArtworkInput {
  const b = body as Record<string, unknown> | undefined;
  if (b && b.bytes instanceof Uint8Array && (b.kind === "svg" || b.kind === "png"))
    return { kind: b.kind, bytes: b.bytes };
  if (b && typeof b.url === "string") return { url: b.url };
  throw new ApiError(400, "invalid_pin", 'Send SVG or PNG bytes, or JSON { "url": ... }.', {
    field: "body",
  });
}
