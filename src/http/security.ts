import { Elysia } from "elysia";
import { beginRequest } from "../platform/log";

/** A caller's X-Request-Id is kept when it is of this form, else the server makes one. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Headers on every response: no MIME sniffing, no referrer leak, a request id for support.
 * The request id is also in every log line written while the request is served.
 */
export const securityHeaders = new Elysia({ name: "security-headers" }).onRequest(
  ({ set, request }) => {
    set.headers["x-content-type-options"] = "nosniff";
    set.headers["referrer-policy"] = "no-referrer";
    const given = request.headers.get("x-request-id");
    const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    set.headers["x-request-id"] = id;
    beginRequest(id);
  },
);
