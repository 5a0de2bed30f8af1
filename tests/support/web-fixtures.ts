/**
 * Fixture websites on loopback for discovery tests and benchmarks:
 *
 *   const web = await startFixtureWeb({ "acme.test": { "/": html(...), "/logo.svg": svg(...) } });
 *   // discovery with DISCOVERY_PROXY=web.proxyUrl, DISCOVERY_ALLOW_PRIVATE=on,
 *   // fetcher.resolve = web.resolve, discovery.txt = web.resolveTxt
 *   await web.stop();
 *
 * One Bun.serve on 127.0.0.1 answers every fixture host (by Host header), and a small HTTP
 * forward proxy on 127.0.0.1 takes absolute-form requests (`GET http://acme.test/ HTTP/1.1`)
 * for those hosts and hands them to it. CONNECT (https) is tunnelled to a TLS twin of the
 * server for the hosts given in `tls` (tls-fixture.ts has a certificate), and answered 502 for
 * the others, as a proxy does for a site that has no TLS, so the fetcher falls back to http://. A host the proxy does not know
 * is answered 502 too: nothing leaves loopback. `resolve` answers 127.0.0.1 for fixture hosts
 * and the `dns` entries given (for SSRF tests: names resolving to private addresses).
 */
import net from "node:net";

export type Route = (req: Request) => Response | Promise<Response>;
export type Site = Record<string, Route>;

export interface FixtureWeb {
  proxyUrl: string;
  /** the fixture server itself (for a test that needs the port) */
  port: number;
  /** every request line the proxy received, in order ("GET http://acme.test/" or "CONNECT acme.test:443") */
  proxied: string[];
  resolve: (host: string) => Promise<string[]>;
  /** TXT records by name (BIMI tests set them); resolveTxt answers them, [] for other names */
  txt: Record<string, string[]>;
  resolveTxt: (name: string) => Promise<string[]>;
  /** add or replace sites while running */
  sites: Record<string, Site>;
  /** the hosts served over https (CONNECT tunnelled); add or remove while running */
  tlsHosts: Set<string>;
  stop(): Promise<void>;
}

export const html = (body: string, headers: Record<string, string> = {}): Route => {
  return () => new Response(body, { headers: { "content-type": "text/html", ...headers } });
};
export const bytes = (data: Uint8Array<ArrayBuffer> | string, type: string): Route => {
  return () => new Response(data, { headers: { "content-type": type } });
};
export const redirect = (location: string, status = 302): Route => {
  return () => new Response(null, { status, headers: { location } });
};

/** The env of an app whose discovery goes through `web`'s proxy (plus `extra`). */
export const fixtureDiscoveryEnv = (web: FixtureWeb, extra: Record<string, string> = {}) => ({
  DISCOVERY: "on",
  DISCOVERY_PROXY: web.proxyUrl,
  DISCOVERY_ALLOW_PRIVATE: "on",
  ...extra,
});

/** A makeApp `customize` pointing discovery's DNS (addresses and TXT) at `web`. */
export const useFixtureWeb =
  (web: FixtureWeb, requestTimeoutMs = 1000) =>
  (deps: {
    discovery: {
      fetcher: { resolve: FixtureWeb["resolve"]; requestTimeoutMs: number };
      txt: FixtureWeb["resolveTxt"] | null;
    };
  }) => {
    deps.discovery.fetcher.resolve = web.resolve;
    deps.discovery.txt = web.resolveTxt;
    deps.discovery.fetcher.requestTimeoutMs = requestTimeoutMs;
  };

export async function startFixtureWeb(
  sites: Record<string, Site>,
  dns: Record<string, string[]> = {},
  /** serve these hosts over https too (CONNECT host:443 is tunnelled to a TLS server) */
  tls?: { hosts: string[]; key: string; cert: string },
): Promise<FixtureWeb> {
  const state = { sites };
  const fetch = (req: Request) => {
    const url = new URL(req.url);
    const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
    const route = state.sites[host]?.[url.pathname];
    return route ? route(req) : new Response("not found", { status: 404 });
  };
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch });
  const secure = tls
    ? Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { key: tls.key, cert: tls.cert }, fetch })
    : null;
  const tunnelled = new Set(tls?.hosts ?? []);
  const proxied: string[] = [];
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    let head = Buffer.alloc(0);
    let bodyStart = 0;
    /** Connect to a loopback port; answer the client and/or send the upstream a head first. */
    const splice = (port: number, toClient: string | null, toUpstream: string | null) => {
      const upstream = net.connect(port, "127.0.0.1", () => {
        if (toClient) client.write(toClient);
        if (toUpstream) upstream.write(toUpstream);
        upstream.write(head.subarray(bodyStart));
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      bodyStart = end + 4;
      const text = head.subarray(0, end).toString("latin1");
      const [line = "", ...rest] = text.split("\r\n");
      const [method = "", target = ""] = line.split(" ");
      proxied.push(`${method} ${target}`);
      let url: URL | null = null;
      try {
        url = new URL(target);
      } catch {}
      const [tunnelHost, tunnelPort] = target.split(":");
      if (
        method === "CONNECT" &&
        secure &&
        tunnelPort === "443" &&
        tunnelled.has(tunnelHost ?? "")
      ) {
        splice(secure.port as number, "HTTP/1.1 200 Connection established\r\n\r\n", null);
        return;
      }
      if (method === "CONNECT" || !url || url.protocol !== "http:" || !state.sites[url.hostname]) {
        client.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
      }
      splice(
        server.port as number,
        null,
        `${method} ${url.pathname}${url.search} HTTP/1.1\r\n${rest.join("\r\n")}\r\n\r\n`,
      );
    };
    client.on("data", onData);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const txt: Record<string, string[]> = {};
  const proxyPort = (proxy.address() as net.AddressInfo).port;
  return {
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    port: server.port as number,
    proxied,
    get sites() {
      return state.sites;
    },
    set sites(v) {
      state.sites = v;
    },
    tlsHosts: tunnelled,
    txt,
    resolveTxt: async (name) => txt[name] ?? [],
    resolve: async (host) => {
      const fixed = dns[host];
      if (fixed) return fixed;
      if (state.sites[host]) return ["127.0.0.1"];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => proxy.close(() => r()));
      server.stop(true);
      secure?.stop(true);
    },
  };
}
