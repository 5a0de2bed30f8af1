import { Elysia, t } from "elysia";
import type { Variant } from "../catalog/built-catalog";
import { VariantName } from "../catalog/model";
import { type Operators, requireOperator } from "../guard";
import { cappedBody } from "../http/body-limits";
import { ErrorBody } from "../http/errors";
import {
  AcceptBody,
  Accepted,
  ArtworkQuery,
  AuditPage,
  AuditQuery,
  BrandPatchBody,
  PinView,
  ReportQueue,
  ReportRecord,
  ReportStatusQuery,
} from "./model";
import { type ArtworkInput, badInput, PIN_MAX_BYTES } from "./pin-artwork";
import { type CorrectionsService, pinView } from "./service";
import type { PinField } from "./store/port";

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

const SlugParams = t.Object({ slug: t.String({ maxLength: 200 }) });
const ArtworkParams = t.Object({ slug: t.String({ maxLength: 200 }), variant: VariantName });

/**
 * Operator routes for corrections (mounted with the other /admin routes when ADMIN_TOKEN is
 * set): the report queue, pinned artwork and fields, pins in force, a brand's audit trail.
 */
export function correctionsAdminController(deps: {
  corrections: CorrectionsService;
  operators: Operators;
}) {
  const { corrections } = deps;
  const operator = (request: Request) => requireOperator(request, deps.operators);
  return new Elysia({ prefix: "/admin", tags: ["admin"] })
    .onParse(({ request }) => {
      operator(request);
      return artworkBody(request);
    })
    .onTransform(({ request }) => {
      operator(request);
    })
    .get(
      "/reports",
      async ({ query }) => {
        const p = await corrections.reports(query.status, query.limit ?? 100, query.cursor);
        return { items: p.items.map((r) => corrections.reportView(r)), next: p.next };
      },
      {
        query: ReportStatusQuery,
        response: { 200: ReportQueue, 401: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "The report queue (operator)",
          description:
            "Newest first, optionally of one status (open, accepted, rejected), `limit` a page (default 100; a full page carries `next`, passed as `cursor` for the next). Each report carries its votes, the reporters' urls and notes, and the brand's current artwork: per variant its source and sha256, the provenance entries, and the pins in force. Kinds: the users' (missing_brand: a company the catalog lacks, named by `domain`; `brand` is the one discovery or a build has made for it since, else null) and pin_orphaned, filed by the service when a catalog build retired a pinned brand and the pin could not move to the brand its slug redirects to.",
        },
      },
    )
    .post(
      "/reports/:id/accept",
      ({ params, body, request }) =>
        corrections.accept(params.id, operator(request), {
          pin: body?.pin,
          variant: body?.variant as Variant | undefined,
          url: body?.url,
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
            "With `{ \"pin\": true }` the report's first url (or `url`, one of its urls) is fetched now (discovery's guarded fetcher: public addresses only, size and time caps) and pinned as the brand's `variant` (default color) in the same step; artwork that cannot be fetched or is not a usable SVG or PNG is 400 invalid_pin and the report stays open. 409 report_decided for a report accepted or rejected already.",
        },
      },
    )
    .post(
      "/reports/:id/reject",
      ({ params, request }) => corrections.reject(params.id, operator(request)),
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
          operator(request),
          { why: query.why ?? null, keep: query.keep?.split(",") as Variant[] | undefined },
        );
        return pinView(pin);
      },
      {
        params: ArtworkParams,
        query: ArtworkQuery,
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
            'The body is the artwork (Content-Type image/svg+xml or image/png, at most 1 MiB), JSON `{ "url": "https://..." }` (fetched through discovery\'s guarded fetcher), or JSON `{ "remove": true }`: the variant is then not served at all (a pin of its removal). The SVG is sanitized and optimized like every mark; SVG with script, event handlers or foreignObject is refused (400 invalid_pin), as is a PNG body that is no PNG. A color or mono pin is the brand\'s new mark: every variant of the brand\'s own artwork (mono, dark, light, icon and wordmark included) stops being served except those named in `keep` and those pinned separately; a single-colour mark pinned as mono or color gives mono (black), dark and light derived by the artwork rules, multi-colour color artwork serves dark and light as it is (and no mono: free keys get the placeholder until mono is pinned). A pin of dark, light, icon or wordmark replaces that variant only. The pin beats the built catalog and discovery, survives catalog reloads, restarts and rediscovery, and leaves an audit event with the value before and after. `why` (query) is kept with it.',
          requestBody: {
            required: true,
            content: {
              "image/svg+xml": { schema: { type: "string" } },
              "image/png": { schema: { type: "string", format: "binary" } },
              "application/json": {
                schema: {
                  oneOf: [
                    { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
                    {
                      type: "object",
                      properties: { remove: { type: "boolean", enum: [true] } },
                      required: ["remove"],
                    },
                  ],
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
        corrections.unpinArtwork(params.slug, params.variant as Variant, operator(request)),
      {
        params: ArtworkParams,
        response: { 200: PinView, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Remove a variant's pin (operator)",
          description:
            "The brand's artwork from the catalog (or discovery) is served again. 404 pin_not_found when the variant has no pin. A pin left under a slug a catalog build retired is removed by that slug.",
        },
      },
    )
    .patch(
      "/brands/:slug",
      async ({ params, body, request }) => {
        const by = operator(request);
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
      ({ params, query }) => corrections.auditOf(params.slug, query.limit ?? 100, query.cursor),
      {
        params: SlugParams,
        query: AuditQuery,
        response: { 200: AuditPage, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "A brand's audit trail (operator)",
          description:
            "Every change to the brand, newest first, `limit` a page (1 to 1000, default 100): a full page carries `next`, passed as `cursor` for the next page (stable while events are added). Types: pin_set, pin_replaced, pin_removed, pin_moved (a build retired the pinned brand; its pin moved to the brand its slug redirects to), pin_orphaned (it could not: reported in the queue), report_accepted, report_rejected, discovery_stored, discovery_refreshed (different artwork found), discovery_refused (an attempt refused or failed), takedown, catalog_changed (a build added, changed or retired the brand). Each names who (`by`: the operator's identity, discovery, catalog, system), and the value `before` and `after` (artwork by sha256 and provenance). The trail is append-only. It includes the events of slugs the brand had (retired slugs redirecting to it); a brand the catalog no longer has answers by its slug.",
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
  if (b && b.remove === true) return { remove: true };
  throw badInput(
    "invalid_pin",
    "body",
    'Send SVG or PNG bytes, JSON { "url": ... }, or JSON { "remove": true }.',
  );
}
