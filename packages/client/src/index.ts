/**
 * A typed client for the Brand Asset API. ESM, no dependencies beyond `fetch` and Web Crypto:
 * Bun, Node >= 20, Deno and browsers (in browsers, use a publishable key for images; never put
 * an API key in a page).
 *
 *   const api = new BrandApi({ baseUrl: "https://api.example", apiKey: process.env.API_KEY });
 *   const github = await api.call("GET /v1/catalog/{slug}", { path: { slug: "github" } });
 *   const src = await api.imageUrl("github", { format: "png", size: 64, dpr: 2 });
 *   const { results } = await api.call("POST /v1/transactions", {
 *     body: { transactions: [{ descriptor: "SQ *BLUE BOTTLE COFFEE OAKLAND", country: "US" }] },
 *   });
 */
import type { Routes } from "./routes";
import {
  type ImageOptionsInput,
  imageFile,
  MAX_URL_TTL_SECONDS,
  type Mac,
  signPath,
  webCryptoMac,
} from "./signing";

export type { Routes } from "./routes";
export type { ImageOptionsInput } from "./signing";
export { canonicalText, imageFile, MAX_URL_TTL_SECONDS } from "./signing";

export type RouteName = keyof Routes;

/** The error codes the API answers with (`{ error, message }`). */
export const ERROR_CODES = [
  "invalid_api_key",
  "service_not_found",
  "domain_not_found",
  "merchant_not_found",
  "validation_error",
  "batch_too_large",
  "email_not_brand_domain",
  "query_too_short",
  "rate_limit_exceeded",
  "internal_error",
  "payload_too_large",
  "uri_too_long",
  "headers_too_large",
  "not_found",
  "render_busy",
  "invalid_signature",
  "url_expired",
  "url_revoked",
  "origin_not_allowed",
  "billing_not_configured",
] as const;
/** A known code, or another string a newer server may answer */
export type ErrorCode = (typeof ERROR_CODES)[number] | (string & {});

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  /** 429: seconds until the limit resets */
  reset_in_seconds?: number;
  /** 429: the pricing page */
  upgrade_url?: string;
  [field: string]: unknown;
}

/** Every non-2xx answer (and a network failure, status 0, code "network_error"). */
export class BrandApiError extends Error {
  readonly name = "BrandApiError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly body: ErrorBody | null,
    /** Retry-After in seconds (429, 503), else null */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  /** e.g. "https://api.example.com" (no trailing path) */
  baseUrl: string;
  /** X-API-Key: server-side code only */
  apiKey?: string;
  /** Authorization: Bearer (the routes that take it: usage, analytics, billing) */
  accessToken?: string;
  /** a publishable key (pk_…) for publicImageUrl() */
  publishableKey?: string;
  /** the key's signing secret (GET /v1/image-urls/signing-secret); fetched once when absent */
  signing?: { kid: string; secret: string };
  /** 429/503 answers whose Retry-After is at most this many seconds are retried; default 5 */
  maxRetryWaitSeconds?: number;
  /** retries of such answers per call; default 2 */
  maxRetries?: number;
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** how a retry waits out Retry-After (default: a timer of that many ms) */
  sleep?: (ms: number) => Promise<void>;
}

type Empty = Record<string, never>;
/** The request of a route: `path` when it has path parameters, `query` and `body` as typed. */
export type RequestOf<R extends RouteName> = (Routes[R]["path"] extends Empty
  ? { path?: Empty }
  : { path: Routes[R]["path"] }) & {
  query?: Routes[R]["query"];
} & (Routes[R]["body"] extends undefined ? { body?: undefined } : { body: Routes[R]["body"] }) & {
    headers?: Record<string, string>;
  };

export type ResponseOf<R extends RouteName> = Routes[R]["response"];

/** One image for imageUrl(): its options and how long the URL lives. */
export interface ImageUrlOptions extends ImageOptionsInput {
  /** seconds, at most 30 days; default 7 days */
  expiresIn?: number;
}

const DAY = 86_400;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class BrandApi {
  private readonly base: string;
  private readonly doFetch: (url: string, init: RequestInit) => Promise<Response>;
  private signing: Promise<{ kid: string; mac: Mac }> | null = null;

  constructor(private readonly opts: ClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.doFetch = opts.fetch ?? ((url, init) => fetch(url, init));
  }

  /** Any /v1 operation, typed by its name: `api.call("GET /v1/search", { query: { q } })`. */
  async call<R extends RouteName>(route: R, req: RequestOf<R>): Promise<ResponseOf<R>> {
    const [method, template] = (route as string).split(" ") as [string, string];
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = (req.path as Record<string, unknown> | undefined)?.[name];
      if (value === undefined) throw new TypeError(`${route}: path parameter ${name} missing`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
      if (v !== undefined && v !== null) query.set(k, String(v));
    const url = `${this.base}${path}${query.size ? `?${query}` : ""}`;
    const headers: Record<string, string> = { accept: "application/json, image/*", ...req.headers };
    if (this.opts.apiKey) headers["x-api-key"] = this.opts.apiKey;
    else if (this.opts.accessToken) headers.authorization = `Bearer ${this.opts.accessToken}`;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const maxRetries = this.opts.maxRetries ?? 2;
    const maxWait = this.opts.maxRetryWaitSeconds ?? 5;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.doFetch(url, { method, headers, body });
      } catch (err) {
        throw new BrandApiError(0, "network_error", String(err), null, null);
      }
      if (res.ok) return (await decode(res)) as ResponseOf<R>;
      const error = await errorOf(res);
      const retryable = res.status === 429 || res.status === 503;
      if (
        retryable &&
        error.retryAfter !== null &&
        error.retryAfter <= maxWait &&
        attempt < maxRetries
      ) {
        await (this.opts.sleep ?? sleep)(error.retryAfter * 1000);
        continue;
      }
      throw error;
    }
  }

  /**
   * A signed /i/ URL for `slug`, signed here with the key's signing secret (fetched once with
   * the API key when the options do not give it): no request per image.
   */
  async imageUrl(slug: string, options: ImageUrlOptions): Promise<string> {
    const { expiresIn = 7 * DAY, ...image } = options;
    if (!(expiresIn > 0 && expiresIn <= MAX_URL_TTL_SECONDS))
      throw new RangeError(`expiresIn must be 1..${MAX_URL_TTL_SECONDS} seconds`);
    const { kid, mac } = await this.signingKey();
    const { file, params } = imageFile(slug, image);
    const exp = Math.floor(Date.now() / 1000) + expiresIn;
    return `${this.base}${await signPath(mac, `/i/${file}`, params, exp, kid)}`;
  }

  /** An /i/ URL with the publishable key (for pages on the key's allowed origins). */
  publicImageUrl(slug: string, options: ImageOptionsInput): string {
    if (!this.opts.publishableKey) throw new TypeError("publicImageUrl needs publishableKey");
    const { file, params } = imageFile(slug, options);
    const query = new URLSearchParams({ ...params, key: this.opts.publishableKey });
    return `${this.base}/i/${file}?${query}`;
  }

  private signingKey() {
    this.signing ??= (async () => {
      const s = this.opts.signing ?? (await this.call("GET /v1/image-urls/signing-secret", {}));
      return { kid: s.kid, mac: await webCryptoMac(s.secret) };
    })();
    // a failed fetch is not remembered
    this.signing.catch(() => {
      this.signing = null;
    });
    return this.signing;
  }
}

async function decode(res: Response): Promise<unknown> {
  if (res.status === 204 || res.status === 304) return undefined;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json")) return res.json();
  if (type.startsWith("image/svg") || type.startsWith("text/")) return res.text();
  return new Uint8Array(await res.arrayBuffer());
}

async function errorOf(res: Response): Promise<BrandApiError> {
  let body: ErrorBody | null = null;
  try {
    const parsed = (await res.json()) as ErrorBody;
    if (parsed && typeof parsed.error === "string") body = parsed;
  } catch {}
  const header = res.headers.get("retry-after");
  const retryAfter = header !== null && /^\d+$/.test(header) ? Number(header) : null;
  return new BrandApiError(
    res.status,
    body?.error ?? `http_${res.status}`,
    body?.message ?? `HTTP ${res.status}`,
    body,
    retryAfter,
  );
}
