/**
 * Signed image URLs: the canonical form and the HMAC-SHA256 signature, shared by the server and
 * the typed client so both sign the same bytes. No runtime-specific module: the client signs
 * with Web Crypto (`webCryptoMac`), the server passes its own synchronous node:crypto HMAC. A URL is `/i/{file}?{params}&sig={signature}`; `params` are every query parameter but
 * `sig` (transform options, `exp` and `kid`). The signed text is
 *
 *     GET {path}?{params sorted by name, each encodeURIComponent(name)=encodeURIComponent(value)}
 *
 * so no parameter can be added, removed or altered, and the order of parameters in the URL does
 * not matter. The signature is the HMAC-SHA256 of that text, base64url without padding (43
 * characters), under the signing secret of the key named by `kid`.
 */
import type { Routes } from "./routes";

/** Longest life of a signed URL: `exp` at most this many seconds ahead. */
export const MAX_URL_TTL_SECONDS = 30 * 86_400;

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The text a signature covers; `params` must hold each name once (no `sig`). */
export function canonicalText(path: string, params: Iterable<[string, string]>): string {
  return `GET ${path}?${canonicalQuery(params)}`;
}

/** The parameters sorted by name, percent-encoded: the query part of a signed URL. */
export function canonicalQuery(params: Iterable<[string, string]>): string {
  return [...params]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

/** HMAC-SHA256 of a text under one signing secret. */
export type Mac = (text: string) => Uint8Array | Promise<Uint8Array>;

/** The Web Crypto HMAC-SHA256 of a base64url signing secret (any runtime with crypto.subtle). */
export async function webCryptoMac(secret: string): Promise<Mac> {
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64url(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return async (text) =>
    new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
}

/**
 * A signed path with its query: `{path}?{canonical params}&sig=…`. `params` carry the transform
 * options; `exp` (unix seconds) and `kid` are added here.
 */
export async function signPath(
  mac: Mac,
  path: string,
  params: Record<string, string>,
  exp: number,
  kid: string,
): Promise<string> {
  const all: [string, string][] = [...Object.entries(params), ["exp", String(exp)], ["kid", kid]];
  const sig = base64url(await mac(canonicalText(path, all)));
  return `${path}?${canonicalQuery(all)}&sig=${sig}`;
}

/**
 * The options of one image, as POST /v1/image-urls and the client's imageUrl() take them (the
 * route's body schema, through the generated route types).
 */
export type ImageOptionsInput = Omit<
  Routes["POST /v1/image-urls"]["body"]["images"][number],
  "slug" | "domain"
>;

/** The file name and query parameters of an /i/ URL (before credentials are added). */
export function imageFile(
  slug: string,
  o: ImageOptionsInput,
): {
  file: string;
  params: Record<string, string>;
} {
  const params: Record<string, string> = {};
  if (o.variant !== undefined) params.variant = o.variant;
  if (o.size !== undefined) params.size = String(o.size);
  if (o.dpr !== undefined) params.dpr = String(o.dpr);
  if (o.greyscale) params.greyscale = "true";
  if (o.bg !== undefined) params.bg = o.bg.replace("#", "").toLowerCase();
  if (o.fallback !== undefined) params.fallback = o.fallback;
  return { file: o.format === "auto" ? slug : `${slug}.${o.format}`, params };
}
