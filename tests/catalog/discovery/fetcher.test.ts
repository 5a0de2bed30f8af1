import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import https from "node:https";
import net from "node:net";
import { join } from "node:path";
import tls from "node:tls";
import { gzipSync } from "node:zlib";
import { addressProblem, checkUrl, Refused } from "../../../src/catalog/discovery/address";
import {
  FetchError,
  fetchErrorOf,
  GuardedFetcher,
  HTML_MAX_BYTES,
} from "../../../src/catalog/discovery/fetcher";
import { trustedCas } from "../../../src/catalog/discovery/setup";
import { tempDir } from "../../support/temp";
import { FIXTURE_TLS } from "../../support/tls-fixture";
import { type FixtureWeb, html, redirect, startFixtureWeb } from "../../support/web-fixtures";

const UA = "BrandAssetAPI-Discovery/1.0 (test)";
let web: FixtureWeb;
const opts = (maxBytes = HTML_MAX_BYTES) => ({
  maxBytes,
  deadline: Date.now() + 10_000,
  accept: "text/html",
});

function fetcher(allowLoopback = true, requestTimeoutMs = 1000, ca?: string) {
  const f = new GuardedFetcher({
    userAgent: UA,
    proxy: web.proxyUrl,
    allowLoopback,
    requestTimeoutMs,
    ca,
  });
  f.resolve = web.resolve;
  return f;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(Refused);
  return (err as Error).message;
}

beforeAll(async () => {
  const big = "x".repeat(HTML_MAX_BYTES + 10);
  web = await startFixtureWeb(
    {
      "acme.test": {
        "/": (req) => new Response(`<p>ua=${req.headers.get("user-agent")}</p>`),
        "/hop1": redirect("/hop2"),
        "/hop2": redirect("http://www.acme.test/"),
      },
      "www.acme.test": { "/": html("<p>final</p>") },
      "loop.test": Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`/${i}`, redirect(`/${i + 1}`)]),
      ),
      "big.test": { "/": html(big) },
      "bigchunked.test": {
        "/": () =>
          new Response(
            new ReadableStream({
              pull(c) {
                c.enqueue(new TextEncoder().encode("y".repeat(64 * 1024)));
              },
            }),
          ),
      },
      "bomb.test": {
        "/": () =>
          new Response(gzipSync(Buffer.alloc(50 * 1024 * 1024)), {
            headers: { "content-encoding": "gzip", "content-type": "text/html" },
          }),
      },
      "gz.test": {
        "/": () =>
          new Response(gzipSync(Buffer.from("<p>zipped</p>")), {
            headers: { "content-encoding": "gzip" },
          }),
      },
      "slow.test": {
        "/": async () => {
          await Bun.sleep(3000);
          return new Response("late");
        },
      },
      "to-private.test": { "/": redirect("http://internal.test/") },
      "to-metadata.test": { "/": redirect("http://metadata.test/latest/meta-data/") },
      "to-literal.test": { "/": redirect("http://127.0.0.1/") },
      "to-localhost.test": { "/": redirect("http://localhost/") },
      "to-port.test": { "/": redirect("http://acme.test:8080/") },
      "to-file.test": { "/": redirect("file:///etc/passwd") },
      "to-mapped.test": { "/": redirect("http://mapped.test/") },
      "secure.test": {
        "/": (req) =>
          new Response(`<p>${new URL(req.url).protocol} ${req.headers.get("host")}</p>`),
        "/to-www": redirect("https://www.secure.test/"),
      },
      "www.secure.test": { "/": html("<p>secure www</p>") },
    },
    {
      "internal.test": ["10.0.0.5"],
      "metadata.test": ["169.254.169.254"],
      "mapped.test": ["::ffff:127.0.0.1"],
      "mixed.test": ["127.0.0.1", "192.168.1.1"],
      "cgnat.test": ["100.64.0.1"],
    },
    FIXTURE_TLS,
  );
});
afterAll(() => web.stop());

describe("address rules", () => {
  test("only http(s) URLs on ports 80/443 with a DNS name", () => {
    expect(checkUrl("https://acme.test/").hostname).toBe("acme.test");
    expect(checkUrl("http://acme.test:80/x").pathname).toBe("/x");
    for (const bad of [
      "ftp://acme.test/",
      "file:///etc/passwd",
      "http://acme.test:8080/",
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://localhost/",
      "http://api.localhost/",
      "http://intranet/",
      "http://user:pw@acme.test/",
    ])
      expect(() => checkUrl(bad)).toThrow(Refused);
  });

  test("only public unicast addresses; loopback only when allowed", () => {
    expect(addressProblem("93.184.216.34")).toBeNull();
    expect(addressProblem("2606:4700::1")).toBeNull();
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "0.0.0.0",
      "240.0.0.1",
      "::1",
      "fe80::1",
      "fc00::1",
      "::ffff:127.0.0.1",
      "ff02::1",
    ])
      expect(addressProblem(a)).not.toBeNull();
    expect(addressProblem("127.0.0.1", true)).toBeNull();
    expect(addressProblem("::1", true)).toBeNull();
    expect(addressProblem("10.0.0.1", true)).not.toBeNull();
    expect(addressProblem("::ffff:127.0.0.1", true)).not.toBeNull();
  });
});

describe("guarded fetcher through the loopback proxy", () => {
  test("https is tried first (CONNECT); its port refused (502), http; the User-Agent names the service", async () => {
    const before = web.proxied.length;
    const r = await fetcher().homepage("acme.test", opts());
    expect(r.status).toBe(200);
    expect(r.url).toBe("http://acme.test/");
    expect(r.body.toString()).toBe(`<p>ua=${UA}</p>`);
    expect(web.proxied.slice(before)).toEqual(["CONNECT acme.test:443", "GET http://acme.test/"]);
  });

  test("https through a CONNECT tunnel, the certificate checked against the site's name", async () => {
    const before = web.proxied.length;
    const r = await fetcher(true, 1000, FIXTURE_TLS.cert).homepage("secure.test", opts());
    expect(r.url).toBe("https://secure.test/");
    expect(r.body.toString()).toBe("<p>https: secure.test</p>");
    expect(web.proxied.slice(before)).toEqual(["CONNECT secure.test:443"]);
    const www = await fetcher(true, 1000, FIXTURE_TLS.cert).get(
      "https://secure.test/to-www",
      opts(),
    );
    expect(www.url).toBe("https://www.secure.test/");
    expect(www.body.toString()).toBe("<p>secure www</p>");
    // a certificate the fetcher does not trust is a TLS failure: never accepted, and the
    // home page is not fetched again over http://
    const before2 = web.proxied.length;
    const untrusted = await fetcher()
      .homepage("secure.test", opts())
      .catch((e) => e);
    expect(untrusted).toBeInstanceOf(FetchError);
    expect(untrusted.code).toBe("tls");
    expect(untrusted.message).toMatch(/SELF_SIGNED|CERT/);
    expect(web.proxied.slice(before2)).toEqual(["CONNECT secure.test:443"]);
  });

  test("redirect chains are followed and re-checked; more than 5 is an error", async () => {
    const r = await fetcher().get("http://acme.test/hop1", opts());
    expect(r.url).toBe("http://www.acme.test/");
    expect(r.redirects).toEqual(["http://acme.test/hop1", "http://acme.test/hop2"]);
    expect(r.body.toString()).toBe("<p>final</p>");
    const err = await fetcher()
      .get("http://loop.test/0", opts())
      .catch((e) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe("redirects");
  });

  test("gzip bodies are decoded", async () => {
    const r = await fetcher().get("http://gz.test/", opts());
    expect(r.body.toString()).toBe("<p>zipped</p>");
  });

  test("oversize bodies, endless bodies and decompression bombs are cut off", async () => {
    for (const host of ["big.test", "bigchunked.test", "bomb.test"]) {
      const err = await fetcher()
        .get(`http://${host}/`, opts())
        .catch((e) => e);
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe("too_large");
    }
  });

  test("a slow site is cut off at the request timeout", async () => {
    // the site answers after 3 s: a timeout error means the request was cut before it did
    const err = await fetcher(true, 500)
      .get("http://slow.test/", opts())
      .catch((e) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe("timeout");
  });

  test("the domain deadline bounds every request", async () => {
    const err = await fetcher(true, 5000)
      .get("http://slow.test/", { ...opts(), deadline: Date.now() + 300 })
      .catch((e) => e);
    expect(err.code).toBe("timeout");
  });

  test("redirects to private, metadata, mapped, literal, localhost, other ports and schemes are refused before the proxy sees them", async () => {
    const cases: [string, RegExp][] = [
      ["to-private.test", /10\.0\.0\.5 is private/],
      ["to-metadata.test", /169\.254\.169\.254 is linkLocal/],
      ["to-mapped.test", /ipv4Mapped/],
      ["to-literal.test", /IP address/],
      ["to-localhost.test", /local name/],
      ["to-port.test", /port 8080/],
      ["to-file.test", /scheme file:/],
    ];
    for (const [host, why] of cases) {
      const before = web.proxied.length;
      expect(await refusal(fetcher().get(`http://${host}/`, opts()))).toMatch(why);
      // only the first hop (to the fixture) went through the proxy
      expect(web.proxied.slice(before)).toEqual([`GET http://${host}/`]);
    }
  });

  test("loopback is refused unless allowed, and a name with any private answer is refused", async () => {
    const before = web.proxied.length;
    expect(await refusal(fetcher(false).get("http://acme.test/", opts()))).toMatch(
      /127\.0\.0\.1 is loopback/,
    );
    expect(await refusal(fetcher().get("http://mixed.test/", opts()))).toMatch(/192\.168/);
    expect(await refusal(fetcher().get("http://cgnat.test/", opts()))).toMatch(/carrierGradeNat/);
    expect(web.proxied.length).toBe(before);
  });
});

describe("the proxy resolves (DISCOVERY_PROXY_RESOLVES)", () => {
  const caFile = () => {
    const file = join(tempDir(), "proxy-ca.pem");
    writeFileSync(file, `# the inspecting proxy's CA\n${FIXTURE_TLS.cert}`);
    return file;
  };
  /** a fetcher on a host without DNS: every lookup fails (and is counted) */
  function noDns() {
    const f = new GuardedFetcher({
      userAgent: UA,
      proxy: web.proxyUrl,
      proxyResolves: true,
      ca: trustedCas(caFile()),
      requestTimeoutMs: 1000,
    });
    const lookups: string[] = [];
    f.resolve = async (host) => {
      lookups.push(host);
      throw new Error(`getaddrinfo EAI_AGAIN ${host}`);
    };
    return { f, lookups };
  }

  test("names go to the proxy unresolved: absolute-form for http, CONNECT host:443 for https", async () => {
    const { f, lookups } = noDns();
    const before = web.proxied.length;
    const r = await f.get("http://acme.test/hop1", opts());
    expect(r.url).toBe("http://www.acme.test/");
    const s = await f.homepage("secure.test", opts());
    expect(s.url).toBe("https://secure.test/");
    expect(s.body.toString()).toBe("<p>https: secure.test</p>");
    expect(web.proxied.slice(before)).toEqual([
      "GET http://acme.test/hop1",
      "GET http://acme.test/hop2",
      "GET http://www.acme.test/",
      "CONNECT secure.test:443",
    ]);
    expect(lookups).toEqual([]);
  });

  test("the checks that need no DNS still run first: IP literals, localhost, single labels, ports, schemes", async () => {
    const { f, lookups } = noDns();
    const before = web.proxied.length;
    for (const bad of [
      "http://127.0.0.1/",
      "http://10.1.2.3/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]/",
      "http://2130706433/",
      "http://localhost/",
      "http://intranet/",
      "http://acme.test:8080/",
      "ftp://acme.test/",
    ])
      await refusal(f.get(bad, opts()));
    expect(web.proxied.length).toBe(before);
    // a redirect to one is refused before the proxy sees it
    expect(await refusal(f.get("http://to-literal.test/", opts()))).toMatch(/IP address/);
    expect(web.proxied.slice(before)).toEqual(["GET http://to-literal.test/"]);
    expect(lookups).toEqual([]);
  });

  test("DISCOVERY_CA_FILE adds its certificates to the system's", () => {
    const cas = trustedCas(caFile());
    expect(cas).toHaveLength(tls.rootCertificates.length + 1);
    expect(cas.at(-1)?.trim()).toBe(FIXTURE_TLS.cert.trim());
    const empty = join(tempDir(), "empty.pem");
    writeFileSync(empty, "nothing here");
    expect(() => trustedCas(empty)).toThrow(/no PEM certificate/);
  });
});

/**
 * A forward proxy that plays an on-path attacker (or a broken network) on https: per host, a
 * CONNECT is refused (502: nothing listening), reset after it was accepted, left hanging, or
 * denied (403). Plain http is served for every host, so a downgrade would succeed and show.
 */
async function interferingProxy() {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    client.once("data", (chunk) => {
      const [method = "", target = ""] = chunk.toString("latin1").split(" ");
      seen.push(`${method} ${target}`);
      const host = method === "CONNECT" ? target.split(":")[0] : new URL(target).hostname;
      if (method !== "CONNECT") {
        const body = `<title>${host} over plain http</title>`;
        client.end(
          `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
      } else if (host === "refused.test") client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      else if (host === "denied.test") client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      else {
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        // reset.test: the connection is cut as TLS starts; stall.test: nothing ever comes
        if (host === "reset.test") client.once("data", () => client.resetAndDestroy());
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const f = new GuardedFetcher({
    userAgent: UA,
    proxy: `http://127.0.0.1:${port}`,
    allowLoopback: true,
    requestTimeoutMs: 500,
  });
  f.resolve = async () => ["127.0.0.1"];
  return {
    f,
    seen,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("no downgrade under interference", () => {
  test("only an https port that refuses outright (CONNECT 502) is read over plain http", async () => {
    const p = await interferingProxy();
    try {
      const ok = await p.f.homepage("refused.test", opts());
      expect(ok.url).toBe("http://refused.test/");
      expect(p.seen).toEqual(["CONNECT refused.test:443", "GET http://refused.test/"]);
      for (const [host, code] of [
        ["reset.test", "connect"],
        ["stall.test", "timeout"],
        ["denied.test", "connect"],
      ] as const) {
        p.seen.length = 0;
        const err = await p.f.homepage(host, opts()).catch((e) => e);
        expect(err).toBeInstanceOf(FetchError);
        expect(err.code).toBe(code);
        // never asked over http
        expect(p.seen).toEqual([`CONNECT ${host}:443`]);
      }
    } finally {
      await p.stop();
    }
  });

  test("without a proxy, a refused connection (nothing listening) is port_closed", async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    // the request itself, to a loopback port known to be closed
    const err = await new Promise<Error>((resolve) => {
      const req = https.request({ hostname: "127.0.0.1", port, path: "/" });
      req.on("error", resolve);
      req.end();
    });
    expect((err as { code?: string }).code).toBe("ECONNREFUSED");
    expect(fetchErrorOf(new URL(`https://closed.test:${port}/`), err).code).toBe("port_closed");
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(fetchErrorOf(new URL("https://a.test/"), reset).code).toBe("connect");
    const tlsErr = Object.assign(new Error("self signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    expect(fetchErrorOf(new URL("https://a.test/"), tlsErr).code).toBe("tls");
  });
});
