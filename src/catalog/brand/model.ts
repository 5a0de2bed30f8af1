import { t } from "elysia";
import { CssVars, DirectoryFields, VariantName, VariantProvenance } from "../model";

const Hex = t.String({ pattern: "^[0-9a-f]{6}$", description: "6 hex characters, no leading #" });

export const BrandQuery = t.Object({
  domain: t.Optional(
    t.String({
      minLength: 3,
      maxLength: 253,
      description:
        "A domain or anything a user pastes for one: case, scheme, user info, port, path, query, trailing dot and a leading www. are ignored; internationalized names are accepted. 3 to 253 characters.",
      error: "Invalid query parameter domain: must be 3 to 253 characters",
    }),
  ),
  email: t.Optional(
    t.String({
      maxLength: 254,
      description: "A business e-mail address, at most 254 characters.",
      error: "Invalid query parameter email: must be at most 254 characters",
    }),
  ),
  wait: t.Optional(
    t.Integer({
      minimum: 0,
      maximum: 10_000,
      description:
        "Milliseconds (0 to 10000) to wait, when no brand has the domain yet, or its brand has no artwork, and web discovery of it is queued or running, for that discovery to end: 200 with the brand when it found one (with its artwork), else the same 404 (or the brand as it was). At most 4 waits per API key at a time; a lookup past that answers at once. Without discovery queued (DISCOVERY off, or the domain tried today) it answers at once.",
      error: "Invalid query parameter wait: must be an integer from 0 to 10000 (milliseconds)",
    }),
  ),
});

export const BrandResponse = t.Object(
  {
    id: t.Integer({ description: "Stable identifier" }),
    slug: t.String(),
    name: t.String(),
    brandColor: t.Union([Hex, t.Null()]),
    darkModeColor: t.Union([Hex, t.Null()]),
    verified: t.Boolean({
      description:
        "true once the brand's data has passed the service's integrity checks (every stored SVG matches its recorded sha256 and passes the sanitizer again) and none of its artwork was read over plain http (provenance website-http). It says nothing about who drew the logo or whether the brand owns it: see provenance for that (bimi-verified: a verified mark certificate). Same as verifiedAt != null",
    }),
    verifiedAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description:
        "When those checks last passed, ISO-8601 UTC (e.g. 2026-01-31T12:00:00.000Z); null until they have run (they run in the background after a first lookup)",
    }),
    variants: t.Array(VariantName, {
      description:
        "Names of the SVG variants stored for the brand, in the order mono, color, dark, light, wordmark, icon; fetch them from GET /v1/svg/{slug}?variant=. May grow on later requests (dark and light are derived in the background)",
    }),
    provenance: VariantProvenance,
    contrastTextColor: t.Union([Hex, t.Null()], {
      description:
        "000000 or ffffff, whichever has the higher WCAG contrast on brandColor (text on a brandColor background); null when brandColor is null",
    }),
    _css: CssVars,
    _notice: t.String(),
    ...DirectoryFields,
  },
  { description: "The brand matched by the domain or e-mail address" },
);
