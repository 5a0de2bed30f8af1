import { Elysia } from "elysia";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { RATE_LIMITS } from "../../quota/limits";
import { Accepted, EmailBody, ResetBody, TokenBody, Verified } from "../model";
import { type AccountsControllerDeps, authMacros, PUBLIC } from "./auth-base";

/** E-mail verification and password reset. */
export function emailRoutes(deps: AccountsControllerDeps) {
  return new Elysia({ tags: ["auth"] })
    .use(authMacros(deps))
    .post(
      "/auth/verify-email",
      async ({ body }) => {
        await deps.auth.verifyEmail(body.token);
        return { emailVerified: true as const };
      },
      {
        jsonBody: true,
        body: TokenBody,
        response: { 200: Verified, 400: ErrorBody, 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Confirm the e-mail address with the token from the verification e-mail",
          description: "Tokens are single-use and expire after 24 hours: 400 invalid_token.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/resend-verification",
      async ({ body, set }) => {
        deps.auth.requestVerificationMail(body.email);
        set.status = 202;
        return {
          message: "If the address belongs to an unverified account, a new link was sent.",
        };
      },
      {
        ipRateLimit: RATE_LIMITS.resendVerification,
        jsonBody: true,
        body: EmailBody,
        response: { 202: Accepted, 413: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Send a new verification e-mail",
          description:
            "Answers 202 whether or not the address is registered, in the same time: the address is looked up and the mail sent after the answer. At most 3 per hour per client IP: 429 with Retry-After.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/forgot-password",
      async ({ body, set }) => {
        deps.auth.requestPasswordReset(body.email);
        set.status = 202;
        return { message: "If the address belongs to an account, a reset link was sent." };
      },
      {
        ipRateLimit: RATE_LIMITS.forgotPassword,
        jsonBody: true,
        body: EmailBody,
        response: { 202: Accepted, 413: ErrorBody, 422: ErrorBody, 429: RateLimitedBody },
        detail: {
          summary: "Send a password reset e-mail",
          description:
            "Answers 202 whether or not the address is registered, in the same time: the address is looked up and the mail sent after the answer. At most 3 per hour per client IP: 429 with Retry-After.",
          security: PUBLIC,
        },
      },
    )
    .post(
      "/auth/reset-password",
      async ({ body }) => {
        await deps.auth.resetPassword(body.token, body.password);
        return { message: "Password changed. Log in again on every device." };
      },
      {
        jsonBody: true,
        body: ResetBody,
        response: { 200: Accepted, 400: ErrorBody, 413: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Set a new password with the token from the reset e-mail",
          description:
            "Tokens are single-use and expire after 1 hour: 400 invalid_token. Every refresh token of the account is revoked (and access tokens issued before the reset stop working).",
          security: PUBLIC,
        },
      },
    );
}
