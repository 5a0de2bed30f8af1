import { Elysia } from "elysia";
import { imageFile } from "../../../packages/client/src/signing";
import { authPlugin } from "../../guard";
import { ErrorBody, invalidApiKey } from "../../http/errors";
import { DomainError, invalid } from "../../platform/domain-errors";
import type { Principal } from "../../quota/principal";
import {
  DEFAULT_URL_TTL_SECONDS,
  ImageUrlsBody,
  ImageUrlsResponse,
  SigningSecretResponse,
} from "../model";
import { parseImageRequest } from "../options";
import { type ImagesDeps, imageSlug } from "./image-deps";

/** POST /v1/image-urls, GET /v1/image-urls/signing-secret: signed /i/ URLs for a key. */
export function imageUrlRoutes(deps: ImagesDeps) {
  return new Elysia({ tags: ["images"] })
    .use(authPlugin(deps))
    .post(
      "/v1/image-urls",
      async ({ body, principal, request }) => {
        const keyId = requireKeyId(principal);
        const ttl = body.expiresIn ?? DEFAULT_URL_TTL_SECONDS;
        const exp = Math.floor(Date.now() / 1000) + ttl;
        const base = deps.publicUrl || new URL(request.url).origin;
        const urls = [];
        for (const [i, spec] of body.images.entries()) {
          const { file, params } = specToUrl(spec, i, (name) => imageSlug(deps, name));
          const path = await deps.signer.sign(keyId, `/i/${file}`, params, exp);
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
        return { kid, secret: await deps.signer.secretOf(kid), algorithm: "HMAC-SHA256" as const };
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

function requireKeyId(principal: Principal): string {
  if (!principal.keyId) throw invalidApiKey();
  return principal.keyId;
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
