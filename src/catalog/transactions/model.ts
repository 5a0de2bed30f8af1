import { type Static, t } from "elysia";
import { BrandQuery, BrandResponse } from "../brand/model";

export const Descriptor = t.String({
  minLength: 3,
  maxLength: 200,
  description:
    "A card-statement descriptor as the card network delivers it, 3 to 200 characters: `SQ *BLUE BOTTLE COFFEE OAKLAND`, `AMZN MKTP US*2K8J90TQ2`, `STARBUCKS 1523 OMAHA NE`",
  examples: ["STARBUCKS 1523 OMAHA NE"],
  error: "Invalid parameter transaction: must be a descriptor of 3 to 200 characters",
});

export const Country = t.String({
  pattern: "^[A-Za-z]{2}$",
  description:
    "The transaction's country, ISO 3166-1 alpha-2 (US, GB, DE; any case): prefers the namesake that trades there",
  examples: ["US"],
  error: "Invalid parameter country: must be an ISO 3166-1 alpha-2 code such as US",
});

export const Mcc = t.String({
  pattern: "^[0-9]{4}$",
  description:
    "The merchant category code (ISO 18245, 4 digits): prefers the namesake of that kind (5541 fuel prefers Shell the oil company)",
  examples: ["5814"],
  error: "Invalid parameter mcc: must be a 4-digit merchant category code such as 5814",
});

export const TransactionInfo = t.Object(
  {
    merchant: t.Union([t.String(), t.Null()], {
      description:
        "The merchant's name as the descriptor writes it, cleaned of the intermediary's prefix, store and reference numbers and the place; null when it names none",
    }),
    intermediary: t.Union(
      [
        t.Object({
          name: t.String({
            description: "Square, Toast, PayPal, Amazon Marketplace, DoorDash ...",
          }),
          kind: t.Union(
            [
              t.Literal("processor"),
              t.Literal("marketplace"),
              t.Literal("delivery"),
              t.Literal("bnpl"),
              t.Literal("wallet"),
            ],
            {
              description:
                "processor (point of sale, card processing), marketplace (marketplace, app store), delivery (delivery and ride platforms), bnpl (buy now, pay later), wallet (wallets and payments between people)",
            },
          ),
          slug: t.Union([t.String(), t.Null()], {
            description: "The intermediary's own catalog entry, when the catalog has it",
          }),
        }),
        t.Null(),
      ],
      {
        description:
          "The processor, marketplace or wallet the descriptor's prefix names; never answered as the merchant unless the descriptor names only it",
      },
    ),
    country: t.Union([t.String({ pattern: "^[a-z]{2}$" }), t.Null()], {
      description:
        "The country used, lower case: the one given, else the one the descriptor's place names (a state code, a city, a country)",
    }),
    match: t.Union(
      [
        t.Literal("name"),
        t.Literal("alias"),
        t.Literal("domain"),
        t.Literal("label"),
        t.Literal("truncated"),
        t.Literal("intermediary"),
        t.Null(),
      ],
      {
        description:
          "How the brand was found: its name or an alias, a domain the descriptor writes, its domain's name, a name cut by the network's length, the intermediary itself; null when none was",
      },
    ),
    confidence: t.Number({
      minimum: 0,
      maximum: 1,
      description:
        "0 to 1. A brand is answered from 0.7; a 404's confidence is the best candidate's, below that",
    }),
    operation: t.Union([t.String(), t.Null()], {
      description:
        "The bank operation the descriptor is (cash_withdrawal, fee, interest, transfer, payment_received, check, debit): no merchant; null otherwise",
    }),
  },
  { description: "What the lookup read from the descriptor" },
);

/** GET /v1/brand's query: domain, email or a descriptor (with its country and MCC). */
export const BrandLookupQuery = t.Composite([
  BrandQuery,
  t.Object({
    transaction: t.Optional(Descriptor),
    country: t.Optional(Country),
    mcc: t.Optional(Mcc),
  }),
]);

/**
 * GET /v1/brand's 200 body: the BrandResponse, plus `transaction` when the lookup was by
 * descriptor.
 */
export const BrandLookupResponse = t.Composite(
  [BrandResponse, t.Object({ transaction: t.Optional(TransactionInfo) })],
  {
    description:
      "The brand matched by the domain, e-mail address or descriptor; `transaction` (descriptor lookups only) says what was read from the descriptor",
  },
);

export const TransactionItem = t.Object({
  descriptor: Descriptor,
  country: t.Optional(Country),
  mcc: t.Optional(Mcc),
});

export const TransactionsBody = t.Object({
  transactions: t.Array(TransactionItem, {
    minItems: 1,
    description:
      "1 to 100 descriptors (free keys: 10; more: 422 batch_too_large), answered in this order",
    examples: [
      [
        { descriptor: "SQ *BLUE BOTTLE COFFEE OAKLAND", country: "US", mcc: "5814" },
        { descriptor: "AMZN MKTP US*2K8J90TQ2" },
        { descriptor: "TESCO STORES 3297 LONDON GB", country: "GB" },
      ],
    ],
  }),
});

export const TransactionResultItem = t.Object({
  descriptor: t.String({ description: "The descriptor as sent" }),
  brand: t.Union([BrandResponse, t.Null()], {
    description:
      "The merchant's brand, exactly as GET /v1/brand?transaction= answers it (without its transaction field); null where that answers 404",
  }),
  transaction: TransactionInfo,
});

/** Two results as POST /v1/transactions answers them (the OpenAPI document's example). */
const EXAMPLE_RESULTS = [
  {
    descriptor: "SQ *LUCYS LEMONADE STAND",
    brand: null,
    transaction: {
      merchant: "LUCYS LEMONADE STAND",
      intermediary: { name: "Square", kind: "processor", slug: "square" },
      country: null,
      match: null,
      confidence: 0,
      operation: null,
    },
  },
  {
    descriptor: "ATM WITHDRAWAL 1234 MAIN ST",
    brand: null,
    transaction: {
      merchant: "ATM WITHDRAWAL MAIN ST",
      intermediary: null,
      country: null,
      match: null,
      confidence: 0,
      operation: "cash_withdrawal",
    },
  },
];

export const TransactionsResponse = t.Object(
  {
    results: t.Array(TransactionResultItem, {
      description: "In the order of `transactions`",
      examples: [EXAMPLE_RESULTS],
    }),
  },
  { description: "Each descriptor's brand, or null, with what was read from it" },
);

/** 404 merchant_not_found (and domain_not_found): the error shape, with what was read. */
export const MerchantNotFoundBody = t.Object(
  {
    error: t.String({ description: "merchant_not_found (transaction) or domain_not_found" }),
    message: t.String(),
    transaction: t.Optional(TransactionInfo),
  },
  {
    description:
      "No brand: merchant_not_found for a descriptor (with what was read from it in `transaction`), domain_not_found for a domain or e-mail",
  },
);

export type TransactionInfoView = Static<typeof TransactionInfo>;
