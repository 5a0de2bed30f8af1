import { Elysia } from "elysia";
import { answerRaster, answerSvg, type ResponseSet } from "../../assets";
import { authPlugin, charge, settleHook } from "../../guard";
import {
  DomainError,
  notFound,
  serviceNotFound,
  unauthenticated,
} from "../../platform/domain-errors";
import { FileParams, imageFileResponses, imageQueryParameters } from "../model";
import { negotiate, parseImageRequest, splitUrl } from "../options";
import { type ImagesDeps, imageSlug } from "./image-deps";

/** Longest Cache-Control max-age of an image (one year, the usual "immutable" figure). */
const YEAR = 31_536_000;

const DESCRIPTION = `A logo for an <img src>: a signed URL (from POST /v1/image-urls, or signed by the client with the key's signing secret) or a publishable key (key=pk_…, allowed origins only). Requests count against the key's svg, png or webp bucket exactly as the X-API-Key routes do (429 when the daily limit is reached) and appear in its usage events. Signed URLs: every parameter is covered by the HMAC-SHA256 signature (403 invalid_signature when one is added, removed or altered, or kid names another key), past exp 403 url_expired, after the key is regenerated or the account deleted 403 url_revoked; a refused signature never touches the quota counters. Artwork through a signed URL carries Cache-Control: public, max-age=<seconds until exp, at most a year>, immutable, and a strong ETag (304 on If-None-Match); placeholders at most max-age=3600. Publishable keys: the request's Origin, else its Referer, must match one of the key's allowed host patterns (403 origin_not_allowed otherwise, absent included); their answers are Cache-Control: private.`;

/** Who pays for an /i/ request: the signature's key, or the publishable key's account. */
function caller(deps: ImagesDeps, request: Request, path: string, q: Map<string, string>) {
  if (q.has("sig")) return deps.signer.verify(path, q);
  const key = q.get("key");
  if (key !== undefined) return deps.publishable.admit(key, request);
  throw unauthenticated(
    "invalid_api_key",
    "An image URL needs a signature (exp, kid, sig from POST /v1/image-urls) or a publishable key (key=pk_…).",
  );
}

/** The slug of an image name, or the 404 to answer once the request is charged. */
function target(deps: ImagesDeps, name: string): { slug: string | null; missing: unknown } {
  try {
    return { slug: imageSlug(deps, name), missing: null };
  } catch (err) {
    if (!(err instanceof DomainError && err.kind === "not_found")) throw err;
    return { slug: null, missing: err };
  }
}

/** GET /i/{file}: a logo by URL, signed or with a publishable key, charged to its key. */
export function imageFileRoutes(deps: ImagesDeps) {
  return new Elysia({ tags: ["images"] }).use(authPlugin(deps)).get(
    "/i/:file",
    ({ params, request, set, route }) => {
      const started = performance.now();
      const { path, query: q } = splitUrl(request.url);
      const signed = q.has("sig");
      // synchronous while keys, secrets and counters answer from memory
      return then(caller(deps, request, path, q), (principal) => {
        const image = parseImageRequest(params.file, q);
        const format = negotiate(image.format, request.headers.get("accept"));
        const { slug, missing } = target(deps, image.name);
        const meter = { route, slug: slug ?? image.name, variant: image.options.variant };
        const charged = charge(deps, request, set, principal, format, meter, started);
        return then(charged, () => {
          if (missing || !slug) throw missing;
          return then(deps.assets.select(slug, image.options, principal.tier), (selected) => {
            if (!selected) throw serviceNotFound(slug);
            if (selected === "hidden")
              throw notFound(
                "service_not_found",
                `The brand "${slug}" has no artwork this key may get (fallback=404).`,
              );
            const ifNoneMatch = request.headers.get("if-none-match");
            const answer =
              format === "svg"
                ? answerSvg(selected, ifNoneMatch, set)
                : answerRaster(
                    deps.assets,
                    format,
                    selected,
                    image.size * image.dpr,
                    ifNoneMatch,
                    set,
                  );
            return then(answer, (body) => {
              cacheHeaders(set, signed, Number(q.get("exp")), image.format === "auto");
              return body;
            });
          });
        });
      });
    },
    {
      params: FileParams,
      afterHandle: settleHook(deps.usage),
      detail: {
        summary: "A logo by URL: signed or with a publishable key",
        description: DESCRIPTION,
        security: [],
        parameters: imageQueryParameters,
        responses: imageFileResponses,
      },
    },
  );
}

/** `f` of a value that may be a promise, synchronously when it is not. */
function then<T, U>(value: T | Promise<T>, f: (v: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** Cache-Control and Vary of an /i/ answer (200 or 304). */
function cacheHeaders(set: ResponseSet, signed: boolean, exp: number, auto: boolean) {
  const placeholder = set.headers["x-svg-variant"] === "placeholder";
  if (signed) {
    const left = Math.max(0, exp - Math.floor(Date.now() / 1000));
    set.headers["cache-control"] = placeholder
      ? `public, max-age=${Math.min(left, 3600)}`
      : `public, max-age=${Math.min(left, YEAR)}, immutable`;
  } else set.headers["cache-control"] = `private, max-age=${placeholder ? 3600 : 86_400}`;
  if (auto) set.headers.vary = "Accept";
  else delete set.headers.vary;
}
