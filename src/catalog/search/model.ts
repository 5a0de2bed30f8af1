import { t } from "elysia";
import { queryInt } from "../../http/params";
import { ServiceResponse } from "../model";

/** Longest q accepted (longer than any brand name; keeps typo lookups cheap). */
export const QUERY_MAX_LENGTH = 100;

export const SearchQuery = t.Object({
  q: t.Optional(
    t.String({
      maxLength: QUERY_MAX_LENGTH,
      description:
        "Name, slug, alias or domain to look for. Normalized (Unicode NFKC, lower-cased, inner whitespace collapsed, trimmed) before use; at least 2 characters after that, at most 100 as sent.",
      error: `Invalid query parameter q: at most ${QUERY_MAX_LENGTH} characters`,
    }),
  ),
  limit: queryInt("limit", 1, 50, 20),
});

export const SearchResponse = t.Object(
  {
    matches: t.Array(ServiceResponse, { description: "Best match first" }),
    query: t.String({ description: "The normalized q that was searched" }),
    total: t.Integer({
      description: "Number of matches in this response (at most limit), not in the whole catalog",
    }),
  },
  { description: "The matches, best first" },
);
