/**
 * The guard tests/setup.ts installs: an attempt to reach beyond loopback fails where it is made
 * (before anything is sent) and is listed for setup.ts to fail the file; loopback, a loopback
 * proxy and unix sockets pass. 192.0.2.1 is TEST-NET-1 (RFC 5737): nothing is ever sent to it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import dns from "node:dns";
import { lookup, Resolver } from "node:dns/promises";
import net from "node:net";
import { isLoopback, takeOffLoopbackAttempts } from "./loopback-guard";

const GUARD = /loopback guard: a test tried to reach/;

afterEach(() => {
  // what a test here provoked on purpose is not the file's failure
  takeOffLoopbackAttempts();
});

describe("the loopback guard", () => {
  test("loopback addresses and names", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "a.localhost", ""])
      expect({ h, loopback: isLoopback(h) }).toEqual({ h, loopback: true });
    for (const h of ["192.0.2.1", "10.0.0.1", "::ffff:10.0.0.1", "2001:db8::1", "example.com"])
      expect({ h, loopback: isLoopback(h) }).toEqual({ h, loopback: false });
  });

  test("fetch: refused beyond loopback, listed; through a loopback proxy it is the proxy's call", async () => {
    await expect(fetch("http://192.0.2.1/")).rejects.toThrow(GUARD);
    await expect(fetch(new Request("https://example.com/x"))).rejects.toThrow(GUARD);
    expect(takeOffLoopbackAttempts()).toEqual([
      "http://192.0.2.1 (fetch)",
      "https://example.com (fetch)",
    ]);
    // nothing listens on 127.0.0.1:1: a connection error, not the guard's
    const viaProxy = await fetch("http://acme.test/", { proxy: "http://127.0.0.1:1" }).catch(
      (e: Error) => e,
    );
    expect(String(viaProxy)).not.toMatch(GUARD);
    expect(takeOffLoopbackAttempts()).toEqual([]);
  });

  test("node:net and Bun.connect", () => {
    expect(() => net.connect(53, "192.0.2.1")).toThrow(GUARD);
    expect(() => net.connect({ host: "example.com", port: 80 })).toThrow(GUARD);
    expect(() => Bun.connect({ hostname: "192.0.2.1", port: 1, socket: { data() {} } })).toThrow(
      GUARD,
    );
    const local = net.connect(1, "127.0.0.1");
    local.on("error", () => {});
    local.destroy();
    expect(takeOffLoopbackAttempts()).toEqual([
      "192.0.2.1 (node:net)",
      "example.com (node:net)",
      "192.0.2.1 (Bun.connect)",
    ]);
  });

  test("DNS: the system resolver and non-loopback name servers are refused; localhost is not", async () => {
    expect(() => lookup("example.com")).toThrow(GUARD);
    expect(() => dns.lookup("example.com", () => {})).toThrow(GUARD);
    expect((await lookup("localhost")).address).toMatch(/^(127\.|::1$)/);
    const system = new Resolver();
    system.setServers(["192.0.2.1"]);
    expect(() => system.resolveTxt("default._bimi.example.com")).toThrow(GUARD);
    const local = new Resolver({ timeout: 200, tries: 1 });
    local.setServers(["127.0.0.1:1"]);
    expect(String(await local.resolveTxt("x.test").catch((e: Error) => e))).not.toMatch(GUARD);
    expect(takeOffLoopbackAttempts()).toEqual([
      "the system resolver for example.com (dns lookup)",
      "the system resolver for example.com (dns lookup)",
      "the name servers 192.0.2.1 for default._bimi.example.com (dns resolveTxt)",
    ]);
  });
});
