import { Elysia } from "elysia";
import { ownAccountRoutes } from "./routes/account";
import type { AccountsControllerDeps } from "./routes/auth-base";
import { emailRoutes } from "./routes/email";
import { sessionRoutes } from "./routes/session";

/** /auth/*: sign-up, login, tokens, e-mail verification, password reset, the caller's account. */
export function accountsController(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(sessionRoutes(deps))
    .use(emailRoutes(deps))
    .use(ownAccountRoutes(deps));
}
