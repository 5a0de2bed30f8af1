/** The part of a server that knows a request's socket address (Bun.serve's `server`). */
export interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

/**
 * Socket addresses handed over by the entry point. `Bun.serve({ fetch: app.fetch })` and
 * `Deno.serve` give the peer address to the fetch handler only, not to Elysia, so the entry point
 * records it here before calling the app:
 *   Bun:  fetch: (req, srv) => { rememberClientAddress(req, srv.requestIP(req)?.address); return app.fetch(req); }
 *   Deno: (req, info) => { rememberClientAddress(req, info.remoteAddr.hostname); return app.fetch(req); }
 */
const socketAddresses = new WeakMap<Request, string>();

export function rememberClientAddress(request: Request, address: string | null | undefined) {
  if (address) socketAddresses.set(request, address);
}

/** Used when no address is known (e.g. `app.handle()` in tests, which has no socket). */
export const UNKNOWN_IP = "unknown";

/**
 * The client's address for per-IP limits: the socket peer address (recorded by the entry point,
 * else Elysia's own server when started with `app.listen`). With TRUST_PROXY set the
 * service sits behind one trusted reverse proxy, and the LAST X-Forwarded-For entry is used:
 * the address that proxy saw (entries to its left are supplied by the client and can be forged).
 */
export function clientIp(
  request: Request,
  server: AddressSource | null | undefined,
  trustProxy: boolean,
): string {
  if (trustProxy) {
    const xff = request.headers.get("x-forwarded-for");
    if (xff) {
      const last = xff.split(",").at(-1)?.trim();
      if (last) return normalize(last);
    }
  }
  let address = socketAddresses.get(request);
  if (!address)
    try {
      address = server?.requestIP(request)?.address;
    } catch {
      address = undefined;
    }
  return address ? normalize(address) : UNKNOWN_IP;
}

/** Strip the IPv4-mapped IPv6 prefix so one client has one identity. */
function normalize(ip: string): string {
  const v = ip.toLowerCase().slice(0, 64);
  return v.startsWith("::ffff:") && v.includes(".") ? v.slice(7) : v;
}
