/**
 * The parameters of an /i/ URL: the file name (slug or domain, and the format's extension) and
 * the image options, parsed from the raw query (the same text the signature covers). Every
 * refusal is a 422 naming the parameter. Plain TS.
 */
import {
  BG_ERROR,
  DEFAULT_SIZE,
  MAX_DPR,
  MAX_SIZE,
  MIN_SIZE,
  PIXELS_ERROR,
  TRUE_FALSE,
} from "../assets/model";
import type { RenderFormat } from "../assets/render";
import type { Fallback, ImageOptions } from "../assets/service";
import { VARIANTS, type Variant } from "../catalog/built-catalog";
import { invalid } from "../platform/domain-errors";

export const FORMATS = ["svg", "png", "webp"] as const;
export type ImageFormat = (typeof FORMATS)[number];
export const FALLBACKS: readonly Fallback[] = ["placeholder", "monogram", "404"];

/** Parameters that are credentials, not image options. */
export const CREDENTIAL_PARAMS = ["exp", "kid", "sig", "key"] as const;

export interface ImageRequest {
  /** a catalog slug, or a domain when it contains a dot */
  name: string;
  /** "auto": WebP when the Accept header takes it, else PNG */
  format: ImageFormat | "auto";
  /** pixels of the box before dpr (raster formats) */
  size: number;
  dpr: number;
  options: ImageOptions;
}

/** Image extensions that are not served (else "github.gif" would be read as a domain). */
const OTHER_IMAGE_EXTS = new Set([
  "gif",
  "jpg",
  "jpeg",
  "avif",
  "ico",
  "bmp",
  "tif",
  "tiff",
  "heic",
]);
const NAME = /^[a-z0-9][a-z0-9_.-]{0,252}$/;
const DECIMAL = /^\d{1,6}$/;

function int(params: Map<string, string>, name: string, min: number, max: number, def: number) {
  const raw = params.get(name);
  if (raw === undefined) return def;
  const n = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= max))
    throw invalid(`Invalid query parameter ${name}: must be an integer from ${min} to ${max}`);
  return n;
}

function oneOf<T extends string>(
  params: Map<string, string>,
  name: string,
  values: readonly T[],
  def: T,
): T {
  const raw = params.get(name);
  if (raw === undefined) return def;
  if (!(values as readonly string[]).includes(raw))
    throw invalid(`Invalid query parameter ${name}: must be one of ${values.join(", ")}`);
  return raw as T;
}

const decodePart = (s: string) => {
  if (!s.includes("%") && !s.includes("+")) return s;
  try {
    return decodeURIComponent(s.replaceAll("+", " "));
  } catch {
    throw invalid("The query string is not valid percent-encoding");
  }
};

/**
 * The path (as sent, not normalized: a signature covers it byte for byte) and query parameters
 * of a request URL, parsed as application/x-www-form-urlencoded like URLSearchParams, without
 * building a URL object (the /i/ hot path). A parameter given twice is refused.
 */
export function splitUrl(href: string): { path: string; query: Map<string, string> } {
  const slash = href.indexOf("/", href.indexOf("//") + 2);
  const mark = href.indexOf("?", Math.max(slash, 0));
  const start = slash < 0 || (mark >= 0 && mark < slash) ? -1 : slash;
  const end = mark < 0 ? href.length : mark;
  const path = start < 0 ? "/" : href.slice(start, end);
  const query = new Map<string, string>();
  if (mark >= 0)
    for (const part of href.slice(mark + 1).split("&")) {
      if (!part) continue;
      const eq = part.indexOf("=");
      const k = decodePart(eq < 0 ? part : part.slice(0, eq));
      if (query.has(k)) throw invalid(`Query parameter ${k} is given more than once`);
      query.set(k, eq < 0 ? "" : decodePart(part.slice(eq + 1)));
    }
  return { path, query };
}

/** `{name}.{svg|png|webp}`, or `{name}` with format=auto (the default without an extension). */
export function parseImageRequest(file: string, params: Map<string, string>): ImageRequest {
  const name = file.toLowerCase();
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? name.slice(dot + 1) : "";
  const hasExt = (FORMATS as readonly string[]).includes(ext);
  if (OTHER_IMAGE_EXTS.has(ext))
    throw invalid(`Unsupported image format .${ext}: use .svg, .png or .webp`);
  const base = hasExt ? name.slice(0, dot) : name;
  if (!NAME.test(base))
    throw invalid("Invalid image name: a catalog slug or a domain, then .svg, .png or .webp");
  const formatParam = params.get("format");
  if (hasExt && formatParam !== undefined && formatParam !== ext)
    throw invalid(`Invalid query parameter format: the file name already says ${ext}`);
  const format = hasExt
    ? (ext as ImageFormat)
    : oneOf(params, "format", [...FORMATS, "auto"] as const, "auto");
  const raster = format !== "svg";
  if (!raster && (params.has("size") || params.has("dpr")))
    throw invalid("size and dpr apply to png, webp and auto, not to svg");
  const size = int(params, "size", MIN_SIZE, MAX_SIZE, DEFAULT_SIZE);
  const dpr = int(params, "dpr", 1, MAX_DPR, 1);
  if (size * dpr > MAX_SIZE) throw invalid(PIXELS_ERROR);
  const bgRaw = params.get("bg");
  if (bgRaw !== undefined && !/^#?[0-9a-fA-F]{6}$/.test(bgRaw)) throw invalid(BG_ERROR);
  const grey = oneOf(params, "greyscale", TRUE_FALSE, "false");
  return {
    name: base,
    format,
    size,
    dpr,
    options: {
      variant: oneOf<Variant>(params, "variant", VARIANTS, "mono"),
      fallback: oneOf(params, "fallback", FALLBACKS, "placeholder"),
      greyscale: grey === "true" || grey === "1",
      bg: bgRaw ? bgRaw.replace("#", "").toLowerCase() : null,
    },
  };
}

/** The format an `auto` request is answered in: WebP when the Accept header names it. */
export function negotiate(
  format: ImageFormat | "auto",
  accept: string | null,
): RenderFormat | "svg" {
  if (format !== "auto") return format;
  return accept && /\bimage\/webp\b/i.test(accept) ? "webp" : "png";
}
