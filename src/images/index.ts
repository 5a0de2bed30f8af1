import { Elysia } from "elysia";
import { imageFile } from "../../packages/client/src/signing";
import { answerRaster, answerSvg, type ResponseSet } from "../assets";
import type { AssetService } from "../assets/service";
import { lookupBrand } from "../catalog/brand/lookup";
import type { BrandResolver } from "../catalog/brand/service";
import { type AuthDeps, authPlugin, charge, settleHook } from "../guard";
import { ErrorBody, invalidApiKey } from "../http/errors";
import {
  DomainError,
  invalid,
  notFound,
  serviceNotFound,
  unauthenticated,
} from "../platform/domain-errors";
import type { Principal } from "../quota/principal";
import {
  DEFAULT_URL_TTL_SECONDS,
  FileParams,
  ImageUrlsBody,
  ImageUrlsResponse,
  imageFileResponses,
  imageQueryParameters,
  SigningSecretResponse,
} from "./model";
import { negotiate, parseImageRequest, splitUrl } from "./options";
import type { PublishableGate } from "./publishable";
import type { ImageSigner } from "./service";

export interface ImagesDeps extends AuthDeps {
  assets: AssetService;
  brands: BrandResolver;
  signer: ImageSigner;
  publishable: PublishableGate;
  /** PUBLIC_URL: the base of the URLs POST /v1/image-urls answers */
  publicUrl: string;
}

/** Longest Cache-Control max-age of an image (one year, the usual "immutable" figure). */
const YEAR = 31_536_000;

const DESCRIPTION = `A logo for an <img src>: a signed URL (from POST /v1/image-urls, or signed by the client with the key's signing secret) or a publishable key (key=pk_…, allowed origins only). Requests count against the key's svg, png or webp bucket exactly as the X-API-Key routes do (429 when the daily limit is reached) and appear in its usage events. Signed URLs: every parameter is covered by the HMAC-SHA256 signature (403 invalid_signature when one is added, removed or altered, or kid names another key), past exp 403 url_expired, after the key is regenerated or the account deleted 403 url_revoked; a refused signature never touches the quota counters. Artwork through a signed URL carries Cache-Control: public, max-age=<seconds until exp, at most a year>, immutable, and a strong ETag (304 on If-None-Match); placeholders at most max-age=3600. Publishable keys: the request's Origin, else its Referer, must match one of the key's allowed host patterns (403 origin_not_allowed otherwise, absent included); their answers are Cache-Control: private.`;

/** GET /i/{file}, POST /v1/image-urls, GET /v1/image-urls/signing-secret */
export function imagesController(deps: ImagesDeps) {
  const { assets, signer } = deps;

  /** The catalog slug of an image name (a slug, or a domain when it has a dot). */
  function slugOf(name: string): string {
    if (name.includes(".")) return lookupBrand(deps.brands, { domain: name }).slug;
    if (!deps.assets.exists(name)) throw serviceNotFound(name);
    return name;
  }

  /** Who pays for an /i/ request: the signature's key, or the publishable key's account. */
  function caller(request: Request, path: string, q: Map<string, string>) {
    if (q.has("sig")) return signer.verify(path, q);
    const key = q.get("key");
    if (key !== undefined) return deps.publishable.admit(key, request);
    throw unauthenticated(
      "invalid_api_key",
      "An image URL needs a signature (exp, kid, sig from POST /v1/image-urls) or a publishable key (key=pk_…).",
    );
  }

  /** The slug of an image name, or the 404 to answer once the request is charged. */
  function target(name: string): { slug: string | null; missing: unknown } {
    try {
      return { slug: slugOf(name), missing: null };
    } catch (err) {
      if (!(err instanceof DomainError && err.kind === "not_found")) throw err;
      return { slug: null, missing: err };
    }
  }

  return new Elysia({ tags: ["images"] })
    .use(authPlugin(deps))
    .get(
      "/i/:file",
      ({ params, request, set, route }) => {
        const started = performance.now();
        const { path, query: q } = splitUrl(request.url);
        const signed = q.has("sig");
        // synchronous while keys, secrets and counters answer from memory
        return then(caller(request, path, q), (principal) => {
          const image = parseImageRequest(params.file, q);
          const format = negotiate(image.format, request.headers.get("accept"));
          const { slug, missing } = target(image.name);
          const meter = { route, slug: slug ?? image.name, variant: image.options.variant };
          const charged = charge(deps, request, set, principal, format, meter, started);
          return then(charged, () => {
            if (missing || !slug) throw missing;
            return then(assets.select(slug, image.options, principal.tier), (selected) => {
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
                      assets,
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
    )
    .post(
      "/v1/image-urls",
      async ({ body, principal, request }) => {
        const keyId = requireKeyId(principal);
        const ttl = body.expiresIn ?? DEFAULT_URL_TTL_SECONDS;
        const exp = Math.floor(Date.now() / 1000) + ttl;
        const base = deps.publicUrl || new URL(request.url).origin;
        const urls = [];
        for (const [i, spec] of body.images.entries()) {
          const { file, params } = specToUrl(spec, i, slugOf);
          const path = await signer.sign(keyId, `/i/${file}`, params, exp);
          urls.push({ url: `${base}${path}`, path });
        }
        return { urls, expiresAt: new Date(exp * 1000).toISOString(), kid: keyId };
      },
      {
        apiKey: true,
        body: ImageUrlsBody,
        response: {
          200: ImageUrlsResponse,
          401: ErrorBody,
          404: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
        },
        detail: {
          tags: ["images"],
          summary: "Sign image URLs for <img> tags",
          description:
            "Answers one signed /i/ URL per requested image, charged (when fetched) to the calling key. Nothing is counted here. A domain is resolved to its brand's slug now (404 domain_not_found, 404 service_not_found for an unknown slug, naming the image's index); an option out of range is 422 naming the image. expiresIn: 60 seconds to 30 days.",
        },
      },
    )
    .get(
      "/v1/image-urls/signing-secret",
      async ({ principal, set }) => {
        const kid = requireKeyId(principal);
        set.headers["cache-control"] = "no-store";
        return { kid, secret: await signer.secretOf(kid), algorithm: "HMAC-SHA256" as const };
      },
      {
        apiKey: true,
        response: { 200: SigningSecretResponse, 401: ErrorBody },
        detail: {
          tags: ["images"],
          summary: "The calling key's image-URL signing secret",
          description:
            "For signing /i/ URLs locally (the typed client's imageUrl()). Derived from the key id and a server secret: it stops working with the key (regenerated or account deleted). Treat it like the API key.",
        },
      },
    );
}

/** `f` of a value that may be a promise, synchronously when it is not. */
function then<T, U>(value: T | Promise<T>, f: (v: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

function requireKeyId(principal: Principal): string {
  if (!principal.keyId) throw invalidApiKey();
  return principal.keyId;
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

type Spec = (typeof ImageUrlsBody.static)["images"][number];

/** The file name and option parameters of one requested image, validated like an /i/ URL. */
function specToUrl(spec: Spec, index: number, slugOf: (name: string) => string) {
  const at = (err: unknown) => {
    if (err instanceof DomainError) return err.prefixed(`images[${index}]: `);
    return err;
  };
  if ((spec.slug === undefined) === (spec.domain === undefined))
    throw invalid(`images[${index}]: pass exactly one of slug or domain`);
  let slug: string;
  try {
    slug = slugOf((spec.slug ?? spec.domain ?? "").toLowerCase());
  } catch (err) {
    throw at(err);
  }
  const { file, params } = imageFile(slug, spec);
  try {
    parseImageRequest(file, new Map(Object.entries(params)));
  } catch (err) {
    throw at(err);
  }
  return { file, params };
}
