import { ApiError } from "../http/errors";
import { hasBearerToken } from "./credentials";

/** The operator check of /admin routes: `Authorization: Bearer <ADMIN_TOKEN>`, else 401. */
export function requireOperator(request: Request, adminToken: string): void {
  if (!hasBearerToken(request, adminToken))
    throw new ApiError(
      401,
      "unauthorized",
      "Pass the operator token as Authorization: Bearer <ADMIN_TOKEN>.",
    );
}
