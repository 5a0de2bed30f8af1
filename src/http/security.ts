import { Elysia } from "elysia";

/** Headers on every response: no MIME sniffing, no referrer leak, a request id for support. */
export const securityHeaders = new Elysia({ name: "security-headers" }).onRequest(
  ({ set, request }) => {
    set.headers["x-content-type-options"] = "nosniff";
    set.headers["referrer-policy"] = "no-referrer";
    const given = request.headers.get("x-request-id");
    set.headers["x-request-id"] =
      given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : crypto.randomUUID();
  },
);
