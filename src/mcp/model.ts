import * as z from "zod";
import { MAX_SIZE, MIN_SIZE } from "../assets/model";
import { QUERY_MAX_LENGTH } from "../catalog/search/model";
import { VARIANTS } from "../catalog/types";
import { BUCKETS, TIERS } from "../quota/limits";

/**
 * Input and output schemas of the MCP tools (zod, as the MCP SDK takes them). The bounds are the
 * REST routes' bounds, so a call the REST twin would refuse before metering (422
 * validation_error) is refused here as invalid arguments, before metering too.
 */

const Hex = z.string().regex(/^[0-9a-f]{6}$/);
const CssHex = z.string().regex(/^#[0-9a-f]{6}$/);

const Css = z
  .object({
    "--brand-color": CssHex,
    "--brand-color-dark": CssHex,
    "--brand-color-contrast": CssHex,
  })
  .nullable()
  .describe("CSS custom properties, ready to paste into a stylesheet");

/** The catalog entry (REST: ServiceResponse). */
export const ServiceEntry = z.object({
  id: z.number().int().describe("Stable identifier"),
  slug: z.string().describe("URL-safe identifier; pass it to get_brand and get_logo"),
  name: z.string(),
  brandColor: Hex.nullable().describe("Primary brand color, 6 hex characters, no leading #"),
  darkModeColor: Hex.nullable().describe("Color for dark themes, 6 hex characters, no #"),
  svgVariants: z.array(z.object({ variant: z.string(), verified: z.boolean() })).nullable(),
  colors: z
    .array(z.object({ role: z.string(), hex: Hex, source: z.string() }))
    .nullable()
    .describe("Color roles (brand, dark-mode, contrast-text, ...)"),
  _css: Css,
  _notice: z.string().describe("Trademark notice"),
});

const Variant = z.enum(VARIANTS);

export const SearchInput = {
  q: z
    .string()
    .max(QUERY_MAX_LENGTH)
    .describe("Brand name, slug, alias or domain; at least 2 characters after trimming"),
  limit: z.number().int().min(1).max(50).default(20).describe("Matches to return, 1..50"),
};
export const SearchOutput = {
  matches: z.array(ServiceEntry).describe("Best match first"),
  query: z.string().describe("The normalized query that was searched"),
  total: z.number().int().describe("Number of matches in this response"),
};

export const SlugInput = {
  slug: z.string().min(1).max(200).describe("Catalog slug, e.g. github (from search_brands)"),
};

export const ResolveInput = {
  domain: z
    .string()
    .min(3)
    .max(253)
    .optional()
    .describe("A domain or URL, e.g. stripe.com or https://docs.stripe.com/api"),
  email: z.string().max(254).optional().describe("A business e-mail address, e.g. jo@stripe.com"),
};
export const BrandOutput = {
  id: z.number().int(),
  slug: z.string(),
  name: z.string(),
  brandColor: Hex.nullable(),
  darkModeColor: Hex.nullable(),
  verified: z.boolean(),
  verifiedAt: z.string().nullable(),
  variants: z.array(Variant).describe("Logo variants available for get_logo"),
  contrastTextColor: Hex.nullable().describe("Text color (black or white) on brandColor"),
  _css: Css,
  _notice: z.string(),
};

export const LogoInput = {
  slug: SlugInput.slug,
  variant: Variant.default("mono").describe(
    "mono (single color), color, dark (for dark backgrounds), light, wordmark, icon; free keys get mono only",
  ),
  format: z.enum(["svg", "png"]).default("svg").describe("svg (markup as text) or png (image)"),
  size: z
    .number()
    .int()
    .min(MIN_SIZE)
    .max(MAX_SIZE)
    .default(256)
    .describe(`PNG box in pixels, ${MIN_SIZE}..${MAX_SIZE} (ignored for svg)`),
};
export const LogoOutput = {
  slug: z.string(),
  format: z.enum(["svg", "png"]),
  mimeType: z.enum(["image/svg+xml", "image/png"]),
  variant: z
    .enum([...VARIANTS, "placeholder"])
    .describe("The variant actually served (placeholder: the brand has no artwork)"),
  requested: Variant.describe("The variant asked for"),
  restricted: z
    .boolean()
    .describe("true when the key's tier does not allow the variant asked for (free: mono only)"),
  size: z.number().int().nullable().describe("PNG box in pixels; null for svg"),
  note: z.string().describe("What was served, in one sentence"),
};

export const ListInput = {
  limit: z.number().int().min(1).max(200).default(50).describe("Entries per page, 1..200"),
  offset: z.number().int().min(0).max(1_000_000_000).default(0).describe("Entries to skip"),
};
export const ListOutput = {
  items: z.array(ServiceEntry),
  total: z.number().int().describe("Entries in the whole catalog"),
  limit: z.number().int(),
  offset: z.number().int(),
};

const BucketUsage = z.object({
  used: z.number().int().describe("Requests made today (UTC)"),
  limit: z.number().int().nullable().describe("Daily cap; null means no cap"),
});
export const UsageOutput = {
  date: z.string().describe("UTC day, YYYY-MM-DD"),
  tier: z.enum(TIERS),
  endpoints: z.object(
    Object.fromEntries(BUCKETS.map((b) => [b, BucketUsage])) as Record<
      (typeof BUCKETS)[number],
      typeof BucketUsage
    >,
  ),
};
