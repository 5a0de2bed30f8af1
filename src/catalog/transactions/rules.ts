/**
 * The rules a card-statement descriptor is read by, as data (docs/transactions.md explains each):
 * intermediaries and their prefixes, bank operations, the words that are not a merchant's name
 * (store words, subscription words, legal forms, card-payment prefixes), abbreviations, and the
 * state and province codes that end a location. Plain data and small functions, no I/O.
 */

export type IntermediaryKind =
  /** a card processor or point-of-sale system: the merchant follows its prefix */
  | "processor"
  /** a marketplace or app store: the seller or app follows */
  | "marketplace"
  /** a delivery or ride platform: the restaurant or shop follows */
  | "delivery"
  /** buy now, pay later: the shop follows */
  | "bnpl"
  /** a wallet or person-to-person service: a shop or a person follows */
  | "wallet";

export interface Intermediary {
  name: string;
  /** the intermediary's own site: its brand, answered when the descriptor names only it */
  domain: string;
  kind: IntermediaryKind;
  /** the prefix at the start of the descriptor (folded text), the separator included */
  prefix: RegExp;
  /** its own names, dropped again at the start of the merchant part ("DD *DOORDASH SHAKE SHACK") */
  own: string[];
  /** a descriptor naming only it is a payment to it (false: a transfer between people) */
  alone: boolean;
}

/** `name *`, `name*`, `name * ` at the start, the names folded. */
const star = (...names: string[]) => new RegExp(`^(?:${names.join("|")})\\s*\\*+\\s*`);

/**
 * Processors, marketplaces, delivery platforms, BNPL and wallets as their prefixes show them on
 * statements (Square `SQ *`, Toast `TST*`, Clover `CLP*`, PayPal `PAYPAL *` and `PP*`, Shopify
 * Payments `SP *`, Zettle `IZ *`, ...). The first that matches is the intermediary.
 */
export const INTERMEDIARIES: Intermediary[] = [
  {
    name: "Amazon Marketplace",
    domain: "amazon.com",
    kind: "marketplace",
    prefix: /^(?:amzn|amazon)\s*(?:mktp|mktpl|mktplace|mktplce|marketplace)[a-z]*\b\s*/,
    own: [],
    alone: true,
  },
  {
    name: "Square",
    domain: "squareup.com",
    kind: "processor",
    prefix: star("sq", "squ", "square", "gosq\\.com"),
    own: ["square", "sq"],
    alone: true,
  },
  {
    name: "Toast",
    domain: "toasttab.com",
    kind: "processor",
    prefix: star("tst"),
    own: ["toast"],
    alone: true,
  },
  {
    name: "Clover",
    domain: "clover.com",
    kind: "processor",
    prefix: star("clp", "clv"),
    own: ["clover"],
    alone: true,
  },
  {
    name: "SumUp",
    domain: "sumup.com",
    kind: "processor",
    prefix: star("sumup"),
    own: ["sumup"],
    alone: true,
  },
  {
    name: "Zettle",
    domain: "zettle.com",
    kind: "processor",
    prefix: /^(?:iz|zettle_?)\s*\*+\s*/,
    own: ["zettle", "izettle"],
    alone: true,
  },
  {
    name: "Shopify",
    domain: "shopify.com",
    kind: "processor",
    prefix: star("sp", "shopify"),
    own: ["shopify"],
    alone: true,
  },
  {
    name: "PayPal",
    domain: "paypal.com",
    kind: "wallet",
    prefix: star("paypal", "pp"),
    own: ["paypal"],
    alone: true,
  },
  {
    name: "Venmo",
    domain: "venmo.com",
    kind: "wallet",
    prefix: star("venmo"),
    own: ["venmo"],
    alone: false,
  },
  {
    name: "Cash App",
    domain: "cash.app",
    kind: "wallet",
    prefix: star("cash app", "sqc"),
    own: ["cash app", "cashapp"],
    alone: false,
  },
  {
    name: "Google",
    domain: "google.com",
    kind: "marketplace",
    prefix: star("google"),
    own: ["google"],
    alone: true,
  },
  {
    name: "Apple",
    domain: "apple.com",
    kind: "marketplace",
    prefix: star("apl", "apple"),
    own: ["apple"],
    alone: true,
  },
  {
    name: "eBay",
    domain: "ebay.com",
    kind: "marketplace",
    prefix: /^ebay\s*(?:o\s*)?\*+\s*/,
    own: ["ebay"],
    alone: true,
  },
  {
    name: "Etsy",
    domain: "etsy.com",
    kind: "marketplace",
    prefix: star("etsy", "etsy\\.com"),
    own: ["etsy"],
    alone: true,
  },
  {
    name: "Mercado Libre",
    domain: "mercadolibre.com",
    kind: "marketplace",
    prefix: star("mercadolivre", "mercadolibre"),
    own: ["mercadolivre", "mercadolibre"],
    alone: true,
  },
  {
    name: "Mercado Pago",
    domain: "mercadopago.com",
    kind: "processor",
    prefix: star("mercadopago", "mp"),
    own: ["mercadopago"],
    alone: true,
  },
  {
    name: "PagSeguro",
    domain: "pagseguro.uol.com.br",
    kind: "processor",
    prefix: star("pag", "pagseguro"),
    own: ["pagseguro"],
    alone: true,
  },
  {
    name: "DoorDash",
    domain: "doordash.com",
    kind: "delivery",
    prefix: star("doordash", "dd"),
    own: ["doordash"],
    alone: true,
  },
  {
    name: "Uber",
    domain: "uber.com",
    kind: "delivery",
    prefix: star("uber"),
    own: ["uber"],
    alone: true,
  },
  {
    name: "Grubhub",
    domain: "grubhub.com",
    kind: "delivery",
    prefix: star("grubhub"),
    own: ["grubhub"],
    alone: true,
  },
  {
    name: "iFood",
    domain: "ifood.com.br",
    kind: "delivery",
    prefix: star("ifood"),
    own: ["ifood"],
    alone: true,
  },
  {
    name: "Rappi",
    domain: "rappi.com",
    kind: "delivery",
    prefix: star("rappi"),
    own: ["rappi"],
    alone: true,
  },
  {
    name: "Grab",
    domain: "grab.com",
    kind: "delivery",
    prefix: star("grab"),
    own: ["grab"],
    alone: true,
  },
  {
    name: "Klarna",
    domain: "klarna.com",
    kind: "bnpl",
    prefix: star("klarna"),
    own: ["klarna"],
    alone: true,
  },
  {
    name: "Afterpay",
    domain: "afterpay.com",
    kind: "bnpl",
    prefix: star("afterpay", "clearpay"),
    own: ["afterpay", "clearpay"],
    alone: true,
  },
  {
    name: "Affirm",
    domain: "affirm.com",
    kind: "bnpl",
    prefix: star("affirm"),
    own: ["affirm"],
    alone: true,
  },
];

/**
 * Bank operations: a descriptor that matches one is no merchant (404 whatever a word of it
 * names). Checked on the folded descriptor after an intermediary's prefix.
 */
export const OPERATIONS: { kind: string; pattern: RegExp }[] = [
  {
    kind: "cash_withdrawal",
    pattern:
      /\b(?:withdrawal|withdrawl|cash machine|atm|retrait|bargeldauszahlung|abhebung|geldautomaat|opname|retiro|prelievo)\b/,
  },
  {
    kind: "fee",
    pattern:
      /\b(?:fee|fees|overdraft|gebuhr|gebuehr|entgelt|frais|comision|commissione|kosten)\b|\bcash advance\b/,
  },
  { kind: "interest", pattern: /\b(?:interest|zinsen|interets|intereses)\b/ },
  {
    kind: "transfer",
    pattern:
      /\b(?:transfer|xfer|trf|tfr|transferencia|transferencias|virement|ueberweisung|uberweisung|overboeking|bonifico|dauerauftrag|standing order|e-transfer|zelle|osko|pix|sent money|wire)\b/,
  },
  {
    kind: "payment_received",
    pattern: /\b(?:thank you|payment received|deposit|direct dep|payroll|gutschrift|salary)\b/,
  },
  { kind: "check", pattern: /^(?:check|cheque|chq|chk)\b/ },
  // a wallet's name without a merchant after it: money sent between people
  { kind: "transfer", pattern: /^(?:venmo|cash app|apple cash|zelle)\b(?!\s*\*)/ },
  { kind: "debit", pattern: /^(?:ach|sepa|lastschrift|prelevement|direct debit|domiciliacion)\b/ },
];

/**
 * Words that are not part of a merchant's name where they follow it: store words, what was
 * bought, subscription and payment words, greetings printed on receipts ("SAGT DANKE"), in the
 * languages of the descriptors read here. Words that name a kind of business are in categories.ts (KIND_WORDS).
 */
export const GENERIC = new Set(
  [
    // stores and places of sale
    "store stores shop shops outlet outlets factory branch depot warehouse wholesale mart",
    "online web internet ecommerce e-commerce app apps digital com",
    // what a payment is for
    "purchase purchases payment payments pymt pmt pymts bill billing invoice order orders pending",
    "subscription subscriptions subscript subscr subs sub membership member renewal recurring autopay",
    "premium plus pro basic standard family monthly annual yearly plan",
    "trip trips ride rides fare tickets ticket ticketshop booking reservation services service svc svcs",
    "help support customer customers charge charges sale sales retail po",
    // receipts and terminals
    "pos terminal contactless card debit credit visa mastercard mc sagt danke dankt thanks merci",
    // other languages' store words
    "filiale magasin tienda negozio winkel",
  ]
    .join(" ")
    .split(" "),
);

/** Region words that stand where a country would ("AMAZON MKTPLCE EU-UK"). */
export const REGIONS = new Set(
  "eu emea apac latam intl international global worldwide europe north south east west central downtown uptown midtown".split(
    " ",
  ),
);

/** Street words: up to two words before one are an address ("MARY ST", "123 MAIN ST"). */
export const STREETS = new Set(
  "st street rd road ave av avenue blvd boulevard hwy highway ln lane pkwy parkway pl plaza rue calle".split(
    " ",
  ),
);

/** How German, Dutch, Nordic and French street names end ("HAUPTSTRASSE", "KALVERSTRAAT"). */
export const STREET_END = /(?:strasse|str|weg|platz|straat|laan|gracht|gatan|gade|vej|veien)$/;

/** Legal forms: where one follows the name, the rest is the company's or branch's detail. */
export const LEGAL = new Set(
  [
    "inc incorporated llc llp lp ltd limited plc corp corporation co company cos",
    "gmbh mbh ag kg ohg ug ev se sa sas sarl sl slu srl spa sp bv nv vof oy oyj ab asa as aps",
    "pty pvt pte bhd sdn kk ltda cia",
    // a company's group or trade ("BT GROUP PLC", "MUELLER HANDELS GMBH")
    "group groep gruppe groupe grupo gruppo holding holdings trading handels handel",
  ]
    .join(" ")
    .split(" "),
);

/** Words before the merchant's name that banks and terminals add: skipped at the start. */
export const LEADING = new Set(
  [
    "the pos purchase debit card visa mc checkcard contactless recurring payment paid to",
    "cb carte kartenzahlung kauf compra achat acquisto",
  ]
    .join(" ")
    .split(" "),
);

/** Abbreviations of name words, each tried expanded (BJS WHSL -> BJS WHOLESALE). */
export const ABBREVIATIONS: Record<string, string[]> = {
  whsl: ["wholesale"],
  whse: ["wholesale", "warehouse"],
  whls: ["wholesale"],
  mkt: ["market"],
  mkts: ["markets", "market"],
  mrkt: ["market"],
  supermkt: ["supermarket"],
  "s/mkt": ["supermarket"],
  "s/mkts": ["supermarkets"],
  wrls: ["wireless"],
  supmkt: ["supermarket"],
  fds: ["foods"],
  rest: ["restaurant", "restaurants"],
  rstrnt: ["restaurant"],
  phar: ["pharmacy"],
  pharm: ["pharmacy"],
  phcy: ["pharmacy"],
  intl: ["international"],
  ctr: ["center", "centre"],
  dept: ["department"],
  svc: ["service"],
  svcs: ["services"],
  hdwr: ["hardware"],
  sptg: ["sporting"],
  gds: ["goods"],
  natl: ["national"],
  "&": ["and"],
  n: ["and"],
};

/** State, province and territory codes that end a location, and their country. */
export const STATES: Record<string, string> = Object.fromEntries([
  ...[
    "al ak az ar ca co ct de dc fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj",
    "nm ny nc nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy pr",
  ]
    .join(" ")
    .split(" ")
    .map((s) => [s, "us"]),
  ..."ab bc mb nb nl ns nt nu on pe qc sk yt".split(" ").map((s) => [s, "ca"]),
  ..."nsw vic qld tas act".split(" ").map((s) => [s, "au"]),
]);

/** Nationality words in a brand's description and the country each names. */
export const NATIONALITIES: Record<string, string> = {
  american: "us",
  "u.s.": "us",
  british: "gb",
  english: "gb",
  scottish: "gb",
  welsh: "gb",
  german: "de",
  french: "fr",
  canadian: "ca",
  australian: "au",
  dutch: "nl",
  spanish: "es",
  italian: "it",
  japanese: "jp",
  brazilian: "br",
  mexican: "mx",
  indian: "in",
  swedish: "se",
  norwegian: "no",
  danish: "dk",
  finnish: "fi",
  polish: "pl",
  swiss: "ch",
  austrian: "at",
  belgian: "be",
  irish: "ie",
  chinese: "cn",
  korean: "kr",
  malaysian: "my",
  singaporean: "sg",
  portuguese: "pt",
  russian: "ru",
  turkish: "tr",
  argentine: "ar",
  argentinian: "ar",
  chilean: "cl",
  colombian: "co",
  peruvian: "pe",
  filipino: "ph",
  philippine: "ph",
  indonesian: "id",
  thai: "th",
  vietnamese: "vn",
  greek: "gr",
  czech: "cz",
  hungarian: "hu",
  romanian: "ro",
  israeli: "il",
  emirati: "ae",
  saudi: "sa",
  "new zealand": "nz",
  "south african": "za",
};
