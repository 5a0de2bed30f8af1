import { Elysia } from "elysia";
import { imageFileRoutes } from "./routes/file";
import type { ImagesDeps } from "./routes/image-deps";
import { imageUrlRoutes } from "./routes/urls";

/** GET /i/{file}, POST /v1/image-urls, GET /v1/image-urls/signing-secret */
export function imagesController(deps: ImagesDeps) {
  return new Elysia().use(imageFileRoutes(deps)).use(imageUrlRoutes(deps));
}
