import type { AssetService } from "../../assets/service";
import { lookupBrand } from "../../catalog/brand/lookup";
import type { BrandResolver } from "../../catalog/brand/service";
import type { AuthDeps } from "../../guard";
import { serviceNotFound } from "../../platform/domain-errors";
import type { PublishableGate } from "../publishable";
import type { ImageSigner } from "../service";

export interface ImagesDeps extends AuthDeps {
  assets: AssetService;
  brands: BrandResolver;
  signer: ImageSigner;
  publishable: PublishableGate;
  /** PUBLIC_URL: the base of the URLs POST /v1/image-urls answers */
  publicUrl: string;
}

/** The catalog slug of an image name (a slug, or a domain when it has a dot). */
export function imageSlug(deps: Pick<ImagesDeps, "brands" | "assets">, name: string): string {
  if (name.includes(".")) return lookupBrand(deps.brands, { domain: name }).slug;
  if (!deps.assets.exists(name)) throw serviceNotFound(name);
  return name;
}
