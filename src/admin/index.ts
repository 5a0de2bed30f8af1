import { Elysia } from "elysia";
import { accountRoutes } from "./routes/accounts";
import { keyRoutes } from "./routes/keys";
import type { AdminDeps } from "./routes/operator";

/** /admin/*: the operator routes. */
export function adminController(deps: AdminDeps) {
  return new Elysia().use(accountRoutes(deps)).use(keyRoutes(deps));
}
