import dns from "node:dns";
import net from "node:net";

/**
 * Tests contact loopback addresses only. `installLoopbackGuard()` (tests/setup.ts) makes every
 * other attempt from the test process fail at once with an error naming it, and keeps a list of
 * them, which setup.ts turns into a failed file even when the code under test swallowed the
 * error (a BIMI lookup that gives up quietly, say). Covered: `fetch` (a request through a
 * loopback proxy is fine), node:net and everything built on it (node:http, node:tls, the MongoDB
 * driver), `Bun.connect`, and DNS: a name looked up in the system resolver (`localhost` aside)
 * or a query to a DNS server that is not on loopback. Processes a test starts are not covered
 * here: scripts/test.ts runs the whole suite in a network namespace of its own, where nothing
 * but loopback exists.
 */
const attempts: string[] = [];

/** The attempts made since the last call, cleared. */
export function takeOffLoopbackAttempts(): string[] {
  return attempts.splice(0);
}

const LOOPBACK_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost"]);

/** Whether `host` (a name or an address, brackets allowed) is a loopback address or name. */
export function isLoopback(host: string | undefined | null): boolean {
  if (host === undefined || host === null || host === "") return true; // the default: localhost
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (LOOPBACK_NAMES.has(h) || h.endsWith(".localhost")) return true;
  if (net.isIPv4(h)) return h.startsWith("127.");
  if (net.isIPv6(h)) return h === "::1" || /^::ffff:127\./.test(h);
  return false;
}

/** A name server as getServers() lists it (`10.0.0.2`, `10.0.0.2:53`, `[::1]:53`, `::1`): its address. */
function serverAddress(server: string): string {
  if (net.isIP(server)) return server;
  const m = /^\[(.+)\]:\d+$/.exec(server) ?? /^(.+):\d+$/.exec(server);
  return m?.[1] ?? server;
}

function refuse(what: string): never {
  const message = `loopback guard: a test tried to reach ${what} (tests contact loopback only)`;
  attempts.push(what);
  throw new Error(message);
}

type Fetch = typeof fetch;
type Connect = (...args: unknown[]) => unknown;

let installed = false;

export function installLoopbackGuard(): void {
  if (installed) return;
  installed = true;

  const realFetch = globalThis.fetch;
  const guardedFetch = (
    input: string | URL | Request,
    init?: RequestInit & { proxy?: string; unix?: string },
  ) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const via = init?.proxy ? new URL(init.proxy).hostname : null;
    const local = ["data:", "blob:", "file:"].includes(url.protocol) || Boolean(init?.unix);
    try {
      if (!local && !isLoopback(via ?? url.hostname))
        refuse(`${url.origin}${via ? ` through the proxy ${via}` : ""} (fetch)`);
    } catch (err) {
      return Promise.reject(err);
    }
    return realFetch(input, init);
  };
  globalThis.fetch = Object.assign(guardedFetch, realFetch) as Fetch;

  const socket = net.Socket.prototype as unknown as { connect: Connect };
  const realConnect = socket.connect;
  socket.connect = function (this: unknown, ...args: unknown[]) {
    // (options[, cb]), (port[, host][, cb]), (path[, cb]), or node's normalized [options, cb]
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    let host: string | undefined;
    let path: string | undefined;
    if (first && typeof first === "object") {
      const o = first as { host?: string; hostname?: string; path?: string; port?: unknown };
      if (o.port === undefined && o.path) path = o.path;
      host = o.host ?? o.hostname;
    } else if (typeof first === "string" && !/^\d+$/.test(first)) path = first;
    else if (typeof args[1] === "string") host = args[1];
    if (!path && !isLoopback(host)) refuse(`${host} (node:net)`);
    return realConnect.apply(this, args);
  };

  const realBunConnect = Bun.connect;
  (Bun as { connect: typeof Bun.connect }).connect = ((options: {
    hostname?: string;
    unix?: string;
  }) => {
    if (!options.unix && !isLoopback(options.hostname)) refuse(`${options.hostname} (Bun.connect)`);
    return realBunConnect(options as Parameters<typeof Bun.connect>[0]);
  }) as typeof Bun.connect;

  // DNS: the system resolver asks the machine's name servers, which are not on loopback
  const realLookup = dns.promises.lookup;
  (dns.promises as { lookup: unknown }).lookup = (host: string, ...rest: unknown[]) => {
    if (!isLoopback(host) && !net.isIP(host))
      refuse(`the system resolver for ${host} (dns lookup)`);
    return (realLookup as (...a: unknown[]) => unknown)(host, ...rest);
  };
  const realCbLookup = dns.lookup;
  (dns as { lookup: unknown }).lookup = (host: string, ...rest: unknown[]) => {
    if (!isLoopback(host) && !net.isIP(host))
      refuse(`the system resolver for ${host} (dns lookup)`);
    return (realCbLookup as (...a: unknown[]) => unknown)(host, ...rest);
  };
  for (const proto of [
    dns.promises.Resolver.prototype,
    dns.Resolver.prototype,
  ] as unknown as Record<string, unknown>[]) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const real = proto[name];
      if (!/^resolve/.test(name) || typeof real !== "function") continue;
      proto[name] = function (this: { getServers(): string[] }, query: string, ...rest: unknown[]) {
        const servers = this.getServers();
        if (!servers.every((s) => isLoopback(serverAddress(s))))
          refuse(`the name servers ${servers.join(", ")} for ${query} (dns ${name})`);
        return (real as (...a: unknown[]) => unknown).call(this, query, ...rest);
      };
    }
  }
}
