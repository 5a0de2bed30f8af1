import type { TSchema } from "elysia";
import * as z from "zod";
import { MAX_SIZE, MIN_SIZE } from "../assets/model";
import { BrandResponse } from "../catalog/brand/model";
import { VARIANTS } from "../catalog/built-catalog";
import { ServiceListResponse, ServiceResponse } from "../catalog/model";
import { QUERY_MAX_LENGTH, SearchResponse } from "../catalog/search/model";
import { TransactionsResponse } from "../catalog/transactions/model";
import { UsageResponse } from "../usage/current/model";

/**
 * A REST response schema (TypeBox, which is JSON Schema) as the zod schema the MCP SDK takes:
 * a tool's output is declared once, by the REST route it mirrors.
 */
const fromRest = (schema: TSchema) => z.fromJSONSchema(JSON.parse(JSON.stringify(schema)));

/** The outputs of the tools with a REST twin: that route's response schema. */
export const ServiceEntry = fromRest(ServiceResponse);
export const SearchOutput = fromRest(SearchResponse);
export const BrandOutput = fromRest(BrandResponse);
export const ListOutput = fromRest(ServiceListResponse);
export const UsageOutput = fromRest(UsageResponse);
export const TransactionsOutput = fromRest(TransactionsResponse);

/**
 * Input and output schemas of the other MCP tools (zod, as the MCP SDK takes them). The bounds are the
 * REST routes' bounds, so a call the REST twin would refuse before metering (422
 * validation_error) is refused here as invalid arguments, before metering too.
 */

const Variant = z.enum(VARIANTS);

export const SearchInput = {
  q: z
    .string()
    .max(QUERY_MAX_LENGTH)
    .describe("Brand name, slug, alias or domain; at least 2 characters after trimming"),
  limit: z.number().int().min(1).max(50).default(20).describe("Matches to return, 1..50"),
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
export const TransactionsInput = {
  transactions: z
    .array(
      z.object({
        descriptor: z
          .string()
          .min(3)
          .max(200)
          .describe(
            "A card-statement line as the bank shows it, e.g. SQ *BLUE BOTTLE COFFEE OAKLAND",
          ),
        country: z
          .string()
          .regex(/^[A-Za-z]{2}$/)
          .optional()
          .describe("The transaction's country, ISO 3166-1 alpha-2 (US, GB)"),
        mcc: z
          .string()
          .regex(/^[0-9]{4}$/)
          .optional()
          .describe("The merchant category code, 4 digits (5814)"),
      }),
    )
    .min(1)
    .max(100)
    .describe("1 to 100 statement lines (free keys: 10), answered in this order"),
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
