/**
 * The one way discovery reaches the web: GET over node:http/node:https with the SSRF rules of
 * address.ts applied to every hop, caps on size and time, and an optional HTTP forward proxy.
 *
 * - Every hop (the first URL and each redirect target, at most MAX_REDIRECTS) is checked with
 *   checkUrl and its host resolved and checked with resolveChecked before anything is sent.
 *   Without a proxy the connection goes to exactly the checked addresses (a pinned `lookup`),
 *   so a DNS answer cannot change between the check and the connect.
 * - With a proxy (DISCOVERY_PROXY=http://host:port) the same checks run first, then http://
 *   URLs are sent to the proxy in absolute form and https:// URLs through a CONNECT tunnel
 *   (TLS to the site, the certificate checked against the site's name). With `proxyResolves`
 *   (DISCOVERY_PROXY_RESOLVES) the host is not resolved here: the proxy gets the name and
 *   resolves and enforces itself; the checks that need no DNS (checkUrl) still run first.
 * - No downgrade under interference: a TLS failure (an untrusted, expired or misnamed
 *   certificate, a failed handshake) is a FetchError "tls", a reset or other connection error
 *   "connect", running out of time "timeout": none is retried over http://. Only an https
 *   port that refuses the connection outright (ECONNREFUSED: nothing listening; through a
 *   proxy, CONNECT answered 502) is "port_closed", and only then does `homepage` read the site
 *   over plain http (what it finds there is marked as such by the caller).
 * - Conditional GETs: `validators` (an earlier response's ETag and Last-Modified) are sent as
 *   If-None-Match and If-Modified-Since; a 304 answers with no body.
 * - Bodies are read up to `maxBytes` after decoding (gzip, deflate, br): a Content-Length over
 *   the cap, or a body (or decompression bomb) that grows past it, is cut off. Each request
 *   has REQUEST_TIMEOUT_MS (headers and body together) and never outlives `deadline`.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Duplex, Readable } from "node:stream";
import tls from "node:tls";
import zlib from "node:zlib";
import ipaddr from "ipaddr.js";
import { checkUrl, Refused, type Resolver, resolveChecked, systemResolver } from "./address";

export const MAX_REDIRECTS = 5;
export const REQUEST_TIMEOUT_MS = 5_000;
export const HTML_MAX_BYTES = 2 * 1024 * 1024;
export const IMAGE_MAX_BYTES = 1024 * 1024;

export type FetchErrorCode =
  | "connect"
  | "port_closed"
  | "tls"
  | "timeout"
  | "too_large"
  | "redirects"
  | "protocol";

/** Error codes of a failed certificate check or TLS handshake (OpenSSL's, Node's, Bun's). */
const TLS_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL|EPROTO|HANDSHAKE|TLS/i;

/**
 * A request error as a FetchError: "tls" for certificate and handshake failures, "port_closed"
 * for a refused connection (nothing listening), "connect" for any other (a reset included).
 */
export function fetchErrorOf(url: URL, err: Error): FetchError {
  if (err instanceof FetchError) return err;
  const code = String((err as { code?: string }).code ?? "");
  const tlsFailed = url.protocol === "https:" && TLS_ERROR.test(code);
  return new FetchError(
    tlsFailed ? "tls" : code === "ECONNREFUSED" ? "port_closed" : "connect",
    `${url.href}: ${code ? `${code} ` : ""}${err.message}`,
  );
}

/** A request that was allowed but did not give a body (network, time, size). */
export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface FetchResult {
  /** the final URL, after redirects */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** every URL that redirected, in order */
  redirects: string[];
  /** the final response's ETag and Last-Modified, when it sent them */
  etag?: string;
  lastModified?: string;
}

/** An earlier response's validators, for a conditional GET. */
export interface Validators {
  etag?: string;
  lastModified?: string;
}

export interface FetcherOptions {
  userAgent: string;
  /** http://host:port of a forward proxy, or null */
  proxy?: string | null;
  /** loopback addresses allowed (DISCOVERY_ALLOW_PRIVATE, tests only) */
  allowLoopback?: boolean;
  resolve?: Resolver;
  requestTimeoutMs?: number;
  /** certificates trusted for https instead of the system's (tests; a TLS-inspecting proxy) */
  ca?: string | string[];
  /** with a proxy: send host names unresolved and let the proxy resolve them */
  proxyResolves?: boolean;
}

export interface GetOptions {
  maxBytes: number;
  /** epoch ms after which nothing more is sent or read */
  deadline: number;
  accept: string;
  /** sent as If-None-Match / If-Modified-Since: a 304 means unchanged */
  validators?: Validators;
}

interface Hop {
  status: number;
  location: string | null;
  contentType: string;
  body: Buffer;
  etag?: string;
  lastModified?: string;
}

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

export class GuardedFetcher {
  /** public so tests can point discovery's DNS at their fixtures */
  resolve: Resolver;
  private proxy: URL | null;
  private allowLoopback: boolean;
  /** per-request cap (REQUEST_TIMEOUT_MS); tests shorten it */
  requestTimeoutMs: number;

  constructor(private options: FetcherOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.proxy = options.proxy ? new URL(options.proxy) : null;
    this.allowLoopback = options.allowLoopback ?? false;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** GET `url`, following up to MAX_REDIRECTS checked redirects. */
  async get(url: string, opts: GetOptions): Promise<FetchResult> {
    const redirects: string[] = [];
    let current = url;
    for (let hop = 0; ; hop++) {
      const checked = checkUrl(current);
      const r = await this.hop(checked, opts);
      if (r.location === null) {
        return {
          url: checked.href,
          status: r.status,
          contentType: r.contentType,
          body: r.body,
          redirects,
          ...(r.etag ? { etag: r.etag } : {}),
          ...(r.lastModified ? { lastModified: r.lastModified } : {}),
        };
      }
      if (hop >= MAX_REDIRECTS)
        throw new FetchError("redirects", `more than ${MAX_REDIRECTS} redirects from ${url}`);
      redirects.push(checked.href);
      try {
        current = new URL(r.location, checked).href;
      } catch {
        throw new FetchError("protocol", `bad redirect location from ${checked.href}`);
      }
    }
  }

  /**
   * https://domain/ first; http://domain/ only when the https port refused the connection
   * outright ("port_closed"), never after a TLS error, a reset or a timeout.
   */
  async homepage(domain: string, opts: GetOptions): Promise<FetchResult> {
    try {
      return await this.get(`https://${domain}/`, opts);
    } catch (err) {
      if (!(err instanceof FetchError) || err.code !== "port_closed") throw err;
      if (Date.now() >= opts.deadline) throw err;
      return this.get(`http://${domain}/`, opts);
    }
  }

  private headers(url: URL, opts: GetOptions): Record<string, string> {
    return {
      host: url.host,
      "user-agent": this.options.userAgent,
      accept: opts.accept,
      "accept-encoding": "gzip, deflate, br",
      "accept-language": "en",
      connection: "close",
      ...(opts.validators?.etag ? { "if-none-match": opts.validators.etag } : {}),
      ...(opts.validators?.lastModified
        ? { "if-modified-since": opts.validators.lastModified }
        : {}),
    };
  }

  private async hop(url: URL, opts: GetOptions): Promise<Hop> {
    const remaining = () => Math.min(this.requestTimeoutMs, opts.deadline - Date.now());
    if (remaining() <= 0) throw new FetchError("timeout", "the domain's time budget is spent");
    // the proxy resolves (and enforces) itself: no local DNS, which an egress-only host lacks
    const addresses =
      this.proxy && this.options.proxyResolves
        ? []
        : await withTimeout(
            resolveChecked(url, this.resolve, this.allowLoopback),
            remaining(),
            `DNS lookup of ${url.hostname} timed out`,
          );
    const ms = remaining();
    if (ms <= 0) throw new FetchError("timeout", "the domain's time budget is spent");
    const cleanup: (() => void)[] = [];
    const timer = setTimeout(() => {
      for (const c of cleanup) c();
    }, ms);
    try {
      return await new Promise<Hop>((resolve, reject) => {
        let settled = false;
        const fail = (err: Error) => {
          if (settled) return;
          settled = true;
          reject(err);
        };
        cleanup.push(() => fail(new FetchError("timeout", `${url.href} took over ${ms} ms`)));
        this.open(url, addresses, opts, cleanup).then((req) => {
          cleanup.push(() => req.destroy());
          req.on("error", (err) => fail(fetchErrorOf(url, err)));
          req.on("response", (res) => {
            cleanup.push(() => res.destroy());
            readResponse(res, url, opts.maxBytes, cleanup).then((hop) => {
              settled = true;
              resolve(hop);
            }, fail);
          });
          req.end();
        }, fail);
      });
    } finally {
      clearTimeout(timer);
      for (const c of cleanup) c();
    }
  }

  /** The request for `url`, direct to its checked addresses or through the proxy. */
  private async open(
    url: URL,
    addresses: string[],
    opts: GetOptions,
    cleanup: (() => void)[],
  ): Promise<http.ClientRequest> {
    const headers = this.headers(url, opts);
    const path = `${url.pathname}${url.search}`;
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    if (!this.proxy) {
      const lookup = pinnedLookup(addresses);
      const base = { hostname: url.hostname, port, path, headers, agent: false, lookup } as const;
      return url.protocol === "https:"
        ? https.request({ ...base, servername: url.hostname, ca: this.options.ca })
        : http.request(base);
    }
    const proxy = { hostname: this.proxy.hostname, port: Number(this.proxy.port || 80) };
    if (url.protocol === "http:")
      return http.request({ ...proxy, path: url.href, headers, agent: false });
    const socket = await this.tunnel(url.hostname, port, cleanup);
    // no `agent: false` here: Bun ignores createConnection with it (and would resolve the host)
    return https.request({
      hostname: url.hostname,
      port,
      path,
      headers,
      createConnection: () =>
        tls.connect({ socket, servername: url.hostname, ca: this.options.ca }),
    });
  }

  /** A CONNECT tunnel through the proxy to host:port. */
  private tunnel(host: string, port: number, cleanup: (() => void)[]): Promise<Duplex> {
    const proxy = this.proxy as URL;
    return new Promise((resolve, reject) => {
      const req = http.request({
        hostname: proxy.hostname,
        port: Number(proxy.port || 80),
        method: "CONNECT",
        path: `${host}:${port}`,
        headers: { host: `${host}:${port}`, "user-agent": this.options.userAgent },
        agent: false,
      });
      cleanup.push(() => req.destroy());
      req.on("connect", (res, socket) => {
        cleanup.push(() => socket.destroy());
        if (res.statusCode === 200) resolve(socket);
        else {
          socket.destroy();
          reject(connectRefused(host, res.statusCode));
        }
      });
      req.on("response", (res) => {
        res.resume();
        reject(connectRefused(host, res.statusCode));
      });
      req.on("error", (err) => reject(new FetchError("connect", `proxy CONNECT ${host}: ${err}`)));
      req.end();
    });
  }
}

/** A CONNECT the proxy did not tunnel: 502 (the site's port refused it) is "port_closed". */
function connectRefused(host: string, status: number | undefined): FetchError {
  return new FetchError(
    status === 502 ? "port_closed" : "connect",
    `proxy CONNECT ${host}: ${status}`,
  );
}

/** A `lookup` that answers only the addresses already checked (no second DNS query). */
function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({
    address,
    family: ipaddr.parse(address).kind() === "ipv6" ? 6 : 4,
  }));
  const first = entries[0] as { address: string; family: number };
  return (_host, options, cb) => {
    if ((options as { all?: boolean })?.all) cb(null, entries);
    else cb(null, first.address, first.family);
  };
}

/** Status, redirect target and body (decoded, at most maxBytes) of a response. */
function readResponse(
  res: http.IncomingMessage,
  url: URL,
  maxBytes: number,
  cleanup: (() => void)[],
): Promise<Hop> {
  const status = res.statusCode ?? 0;
  const contentType = String(res.headers["content-type"] ?? "").toLowerCase();
  const location = res.headers.location;
  const validators = {
    ...(res.headers.etag ? { etag: String(res.headers.etag) } : {}),
    ...(res.headers["last-modified"] ? { lastModified: String(res.headers["last-modified"]) } : {}),
  };
  if (status >= 300 && status < 400 && location) {
    res.resume();
    return Promise.resolve({ status, location, contentType, body: Buffer.alloc(0) });
  }
  if (status < 200 || status >= 300) {
    res.resume();
    return Promise.resolve({ status, location: null, contentType, body: Buffer.alloc(0) });
  }
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes)
    return Promise.reject(
      new FetchError("too_large", `${url.href}: Content-Length ${declared} over ${maxBytes}`),
    );
  const encoding = String(res.headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  const makeDecoder = DECODERS[encoding];
  if (!makeDecoder && encoding !== "identity" && encoding !== "")
    return Promise.reject(new FetchError("protocol", `${url.href}: content-encoding ${encoding}`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let raw = 0;
    let decoded = 0;
    let stream: Readable = res;
    if (makeDecoder) {
      const decoder = makeDecoder();
      cleanup.push(() => decoder.destroy());
      stream = res.pipe(decoder);
    }
    const tooLarge = () => {
      reject(new FetchError("too_large", `${url.href}: body over ${maxBytes} bytes`));
      res.destroy();
    };
    res.on("data", (chunk: Buffer) => {
      raw += chunk.length;
      if (raw > maxBytes) tooLarge();
    });
    stream.on("data", (chunk: Buffer) => {
      decoded += chunk.length;
      if (decoded > maxBytes) return tooLarge();
      chunks.push(chunk);
    });
    stream.on("end", () =>
      resolve({ status, location: null, contentType, body: Buffer.concat(chunks), ...validators }),
    );
    stream.on("error", (err) =>
      reject(new FetchError("protocol", `${url.href}: ${(err as Error).message}`)),
    );
    res.on("error", (err) => reject(new FetchError("connect", `${url.href}: ${err.message}`)));
  });
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchError("timeout", message)), Math.max(ms, 0));
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export { Refused };
