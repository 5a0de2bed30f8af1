import { t } from "elysia";
import type { Variant } from "../../catalog/built-catalog";
import { ErrorBody } from "../../http/errors";
import { ArtworkParams, ArtworkQuery, BrandPatchBody, PinView, SlugParams } from "../model";
import { type ArtworkInput, badInput } from "../pin-artwork";
import { pinView } from "../pins";
import type { PinField } from "../store/port";
import { type CorrectionsAdminDeps, operatorOf, operatorRoutes } from "./operator";

/** Pins: a brand's artwork per variant, its name, colour, domains and aliases; every pin in force (operator). */
export function pinRoutes(deps: CorrectionsAdminDeps) {
  const { corrections } = deps;
  const operator = operatorOf(deps);
  return operatorRoutes(deps)
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
    });
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
