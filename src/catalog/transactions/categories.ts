/**
 * What kind of business a merchant category code (ISO 18245 MCC) names and what kind a catalog
 * brand is, in the same small set of groups, so that an MCC can prefer one namesake over another
 * (a fuel MCC prefers Shell the oil company) and lower the confidence in a brand of another kind.
 * A brand's groups come from what OpenStreetMap maps it as (name-suggestion-index categories),
 * else from its description's words, else, for a brand only icon sets carry, "digital".
 */
export type Group =
  | "grocery"
  | "general"
  | "fuel"
  | "food"
  | "pharmacy"
  | "electronics"
  | "home"
  | "clothing"
  | "books"
  | "sports"
  | "pets"
  | "alcohol"
  | "post"
  | "entertainment"
  | "auto"
  | "lodging"
  | "airline"
  | "transport"
  | "telecom"
  | "digital"
  | "finance"
  | "utility"
  | "health";

/**
 * Words that name a kind of business ("SHELL OIL", "DELTA AIR", "SPECSAVERS OPTICIANS"): after a
 * name they are explained only when the brand is of that kind, so "APPLE BAKERY" is not Apple.
 */
export const KIND_WORDS = new Map<string, Group[]>();
for (const [group, words] of [
  ["fuel", "oil petrol gas fuel station pfs tankstelle carburant gasolinera"],
  ["transport", "station travel rail railway bahn rent-a-car rental rentals"],
  ["airline", "air airline airlines airways aviation lines"],
  ["electronics", "electro electronics elektro elektronik"],
  ["clothing", "mode fashion moda apparel clothing"],
  ["telecom", "wireless wrls cable comm comms communications telecom mobile broadband"],
  ["health", "optician opticians optical opticien"],
  [
    "pharmacy",
    "pharmacy pharmacies pharm chemist chemists drugstore drug apotheke pharmacie farmacia",
  ],
  [
    "food",
    "restaurant restaurants rest cafe coffee grill pizza pizzeria bistro diner burger burgers bakery boulangerie baeckerei backerei bakkerij panaderia",
  ],
  [
    "grocery",
    "supermarket supermarkets market markets markt foods grocery groceries supermarche supermercado supermercato",
  ],
  ["home", "baumarkt hardware diy"],
  ["books", "books bookstore bookshop buchhandlung librairie libreria"],
  ["lodging", "hotel hotels inn resort"],
  ["entertainment", "cinema cinemas theatre theater movies"],
  ["finance", "bank banking insurance ins"],
  ["auto", "tyres tires garage"],
  ["sports", "fitness gym"],
  // store formats ("CARREFOUR CITY", "TESCO EXPRESS"): a retailer's, never part of another
  // company's name ("NATIONAL EXPRESS" is no car rental's store)
  ...(["grocery", "general", "food", "fuel", "pharmacy", "lodging"] as Group[]).map(
    (g): [Group, string] => [
      g,
      "express city metro extra hyper hypermarket hypermarche mini superstore supercenter supercentre discount direct",
    ],
  ),
] as [Group, string][])
  for (const w of words.split(" ")) KIND_WORDS.set(w, [...(KIND_WORDS.get(w) ?? []), group]);

/** MCC ranges (inclusive) and their groups; the first that holds a code wins (narrow ranges first). */
const MCC_RANGES: [number, number, Group[]][] = [
  [3000, 3350, ["airline"]],
  [3351, 3500, ["transport"]],
  [3501, 3999, ["lodging"]],
  [742, 742, ["pets", "health"]],
  [4011, 4011, ["transport"]],
  [4111, 4131, ["transport"]],
  [4214, 4215, ["post"]],
  [4411, 4411, ["transport"]],
  [4511, 4511, ["airline"]],
  [4582, 4582, ["airline"]],
  [4722, 4722, ["transport", "airline", "lodging", "digital"]],
  [4784, 4789, ["transport"]],
  [4812, 4816, ["telecom", "digital"]],
  [4821, 4821, ["telecom"]],
  [4899, 4899, ["telecom", "digital", "entertainment"]],
  [4900, 4900, ["utility"]],
  [5013, 5013, ["auto"]],
  [5045, 5045, ["electronics", "digital"]],
  [5192, 5192, ["books", "digital"]],
  [5200, 5261, ["home"]],
  [5300, 5300, ["general", "grocery"]],
  [5309, 5399, ["general"]],
  [5411, 5411, ["grocery", "general"]],
  [5422, 5499, ["grocery", "food"]],
  [5541, 5542, ["fuel"]],
  [5511, 5599, ["auto"]],
  [5611, 5699, ["clothing"]],
  [5712, 5722, ["home", "electronics"]],
  [5732, 5733, ["electronics"]],
  [5734, 5734, ["digital", "electronics"]],
  [5735, 5735, ["digital", "electronics", "entertainment"]],
  [5811, 5814, ["food"]],
  [5815, 5818, ["digital", "entertainment"]],
  [5912, 5912, ["pharmacy", "health"]],
  [5921, 5921, ["alcohol"]],
  [5940, 5941, ["sports", "clothing"]],
  [5942, 5943, ["books", "general"]],
  [5944, 5950, ["general", "clothing"]],
  [5960, 5969, ["general", "digital"]],
  [5970, 5975, ["general"]],
  [5976, 5976, ["health"]],
  [5977, 5977, ["pharmacy", "clothing"]],
  [5983, 5983, ["fuel"]],
  [5992, 5992, ["general"]],
  [5993, 5994, ["books", "general"]],
  [5995, 5995, ["pets"]],
  [5999, 5999, ["general", "digital"]],
  [6010, 6099, ["finance"]],
  [6300, 6399, ["finance"]],
  [7011, 7033, ["lodging"]],
  [7210, 7299, ["general"]],
  [7372, 7379, ["digital"]],
  [7399, 7399, ["digital", "finance"]],
  [7512, 7519, ["transport"]],
  [7523, 7523, ["transport"]],
  [7531, 7549, ["auto", "fuel"]],
  [7800, 7999, ["entertainment", "sports"]],
  [8011, 8099, ["health"]],
  [8043, 8043, ["health", "clothing"]],
  [8398, 8398, ["general"]],
  [9402, 9402, ["post"]],
];

/** The groups an MCC ("5541") names, empty for a code outside the table. */
export function mccGroups(mcc: string | undefined): Group[] {
  if (!mcc) return [];
  const code = Number(mcc);
  for (const [from, to, groups] of MCC_RANGES) if (code >= from && code <= to) return groups;
  return [];
}

/** OpenStreetMap's tags (name-suggestion-index category paths) and their groups. */
const OSM: Record<string, Group> = {
  "shop/supermarket": "grocery",
  "shop/convenience": "grocery",
  "shop/greengrocer": "grocery",
  "shop/butcher": "grocery",
  "shop/bakery": "food",
  "shop/deli": "grocery",
  "shop/frozen_food": "grocery",
  "shop/health_food": "grocery",
  "shop/department_store": "general",
  "shop/variety_store": "general",
  "shop/wholesale": "general",
  "shop/general": "general",
  "shop/discount": "general",
  "shop/gift": "general",
  "amenity/fuel": "fuel",
  "amenity/car_wash": "fuel",
  "amenity/restaurant": "food",
  "amenity/fast_food": "food",
  "amenity/cafe": "food",
  "amenity/bar": "food",
  "amenity/pub": "food",
  "amenity/ice_cream": "food",
  "amenity/food_court": "food",
  "shop/coffee": "food",
  "shop/pastry": "food",
  "amenity/pharmacy": "pharmacy",
  "shop/chemist": "pharmacy",
  "shop/cosmetics": "pharmacy",
  "shop/perfumery": "pharmacy",
  "shop/beauty": "pharmacy",
  "shop/electronics": "electronics",
  "shop/computer": "electronics",
  "shop/mobile_phone": "telecom",
  "shop/hifi": "electronics",
  "shop/appliance": "electronics",
  "shop/video_games": "electronics",
  "shop/doityourself": "home",
  "shop/hardware": "home",
  "shop/furniture": "home",
  "shop/garden_centre": "home",
  "shop/houseware": "home",
  "shop/interior_decoration": "home",
  "shop/kitchen": "home",
  "shop/bed": "home",
  "shop/paint": "home",
  "shop/trade": "home",
  "shop/clothes": "clothing",
  "shop/shoes": "clothing",
  "shop/fashion_accessories": "clothing",
  "shop/bag": "clothing",
  "shop/jewelry": "clothing",
  "shop/boutique": "clothing",
  "shop/books": "books",
  "shop/stationery": "books",
  "shop/newsagent": "books",
  "shop/kiosk": "books",
  "shop/sports": "sports",
  "shop/outdoor": "sports",
  "leisure/fitness_centre": "sports",
  "leisure/sports_centre": "sports",
  "shop/pet": "pets",
  "amenity/veterinary": "pets",
  "shop/alcohol": "alcohol",
  "shop/wine": "alcohol",
  "shop/beverages": "alcohol",
  "amenity/post_office": "post",
  "amenity/post_box": "post",
  "amenity/post_depot": "post",
  "amenity/parcel_locker": "post",
  "office/courier": "post",
  "amenity/cinema": "entertainment",
  "amenity/theatre": "entertainment",
  "shop/car": "auto",
  "shop/car_parts": "auto",
  "shop/car_repair": "auto",
  "shop/tyres": "auto",
  "tourism/hotel": "lodging",
  "tourism/motel": "lodging",
  "tourism/hostel": "lodging",
  "tourism/guest_house": "lodging",
  "amenity/bank": "finance",
  "amenity/atm": "finance",
  "amenity/bureau_de_change": "finance",
  "amenity/money_transfer": "finance",
  "office/insurance": "finance",
  "amenity/car_rental": "transport",
  "amenity/car_sharing": "transport",
  "amenity/bicycle_rental": "transport",
  "amenity/taxi": "transport",
  "office/telecommunication": "telecom",
  "telecom/exchange": "telecom",
  "office/energy_supplier": "utility",
  "shop/optician": "health",
  "shop/hearing_aids": "health",
  "amenity/doctors": "health",
  "amenity/dentist": "health",
  "amenity/clinic": "health",
};

/** Words of a description and the group each names (checked in this order, all that match count). */
const DESCRIPTION: [RegExp, Group][] = [
  [/\bairlines?\b|\bair carrier\b|\bflag carrier\b/, "airline"],
  [/\bhotels?\b|\bhospitality\b/, "lodging"],
  [/\bsupermarkets?\b|\bgrocer(?:y|ies)\b|\bhypermarkets?\b|\bconvenience stores?\b/, "grocery"],
  [
    /\bfast[- ]food\b|\brestaurants?\b|\bcoffee(?:house)?s?\b|\bcaf[eé]s?\b|\bpizza\b|\bbakery\b/,
    "food",
  ],
  [
    /\bpetrol\b|\bgas stations?\b|\bfilling stations?\b|\bfuel\b|\boil(?: and gas)? company\b|\bpetroleum\b/,
    "fuel",
  ],
  [/\bpharmac(?:y|ies)\b|\bdrugstores?\b|\bchemists?\b|\bcosmetics?\b/, "pharmacy"],
  [
    /\bdepartment stores?\b|\bretail(?:er|ers)?\b|\bwarehouse club\b|\bdiscount stores?\b|\bvariety stores?\b/,
    "general",
  ],
  [/\be-?commerce\b|\bonline (?:retailer|marketplace|shop|store)\b|\bmarketplace\b/, "general"],
  [/\bclothing\b|\bfashion\b|\bapparel\b|\bshoes?\b|\bfootwear\b/, "clothing"],
  [/\belectronics\b|\bconsumer electronics\b|\bcomputers?\b/, "electronics"],
  [/\bhome improvement\b|\bhardware stores?\b|\bfurniture\b|\bdiy\b/, "home"],
  [
    /\bbanks?\b|\bbanking\b|\binsurance\b|\bfinancial services\b|\bpayments?\b|\bfintech\b/,
    "finance",
  ],
  [
    /\btelecom(?:munications?)?\b|\bmobile (?:network|phone|operator)\b|\bcable\b|\bbroadband\b|\binternet service\b/,
    "telecom",
  ],
  [
    /\brailways?\b|\brail\b|\btrains?\b|\bbus(?:es)?\b|\bride[- ]?(?:hailing|sharing)\b|\btaxi\b|\bcar rental\b|\btransport\b/,
    "transport",
  ],
  [
    /\bstreaming\b|\bsoftware\b|\bvideo games?\b|\bweb ?sites?\b|\bweb service\b|\bsearch engine\b|\bsocial (?:network|media)\b|\bmobile app\b|\bonline\b|\bcloud\b/,
    "digital",
  ],
  [/\bbooks?(?:stores?|sellers?)?\b|\bnewspapers?\b|\bstationery\b/, "books"],
  [/\bcinemas?\b|\bmovie theaters?\b|\btickets?\b|\bentertainment\b/, "entertainment"],
  [/\bsport(?:s|ing)? goods\b|\bgyms?\b|\bfitness\b/, "sports"],
  [/\bpets?\b/, "pets"],
  [/\bpostal\b|\bpost office\b|\bcourier\b|\bparcel\b|\blogistics\b|\bdelivery\b/, "post"],
  [/\bauto(?:motive)? parts\b|\bcar (?:parts|repair)\b|\btyres?\b|\btires?\b/, "auto"],
  [/\belectric(?:ity)? (?:utility|supplier)\b|\butility\b/, "utility"],
];

/** Sources that draw only software, services and apps: a brand only they carry is a digital one. */
const DIGITAL_SOURCES = /^(?:iconify:(?:devicon|skill-icons|vscode-icons)|lobehub|web3icons)/;

/**
 * The groups a catalog brand belongs to: from its OSM tags, its description's words and the
 * kind words of its name ("Japan Airlines", "Whole Foods Market"); failing those, "digital" for
 * a brand only the software icon sets carry.
 */
export function brandGroups(b: {
  name: string;
  categories?: string[];
  description?: string;
  sources: string[];
}): Set<Group> {
  const out = new Set<Group>();
  for (const w of b.name.toLowerCase().split(/[^\p{L}]+/u))
    for (const g of KIND_WORDS.get(w) ?? []) out.add(g);
  for (const c of b.categories ?? []) {
    const g = OSM[c];
    if (g) out.add(g);
  }
  const d = b.description?.toLowerCase() ?? "";
  if (d) for (const [re, g] of DESCRIPTION) if (re.test(d)) out.add(g);
  if (!out.size && !d && b.sources.every((s) => DIGITAL_SOURCES.test(s))) out.add("digital");
  return out;
}
