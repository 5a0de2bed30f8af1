/**
 * Which hosts and addresses discovery may contact (the SSRF rules), checked on every hop.
 *
 * A URL may be fetched only when its scheme is http or https, its port is 80 or 443 (or the
 * scheme's default), its host is a DNS name (no IP literal, no `localhost` or `*.localhost`),
 * and every address the name resolves to is public unicast: ipaddr.js's range "unicast",
 * which leaves out loopback, private, link-local, CGNAT, multicast, broadcast, unspecified,
 * reserved and documentation ranges, IPv4-mapped and IPv4-embedding IPv6 (6to4, Teredo,
 * NAT64) and unique-local IPv6. `allowLoopback` (DISCOVERY_ALLOW_PRIVATE, tests only) lifts
 * the refusal of loopback addresses (127.0.0.0/8, ::1) and nothing else.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** A request discovery refuses to make (never retried the same day; counted as "refused"). */
export class Refused extends Error {}

/** Names a host resolves to; injectable so tests never depend on real DNS. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

const ALLOWED_PORTS = new Set(["", "80", "443"]);

/** The URL, checked for scheme, port and host form (no DNS); throws Refused. */
export function checkUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Refused(`not a URL: ${String(input).slice(0, 200)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Refused(`scheme ${url.protocol} is not http or https`);
  if (!ALLOWED_PORTS.has(url.port)) throw new Refused(`port ${url.port} is not 80 or 443`);
  if (url.username || url.password) throw new Refused("URL carries credentials");
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  if (host.startsWith("[") || ipaddr.isValid(host) || /^[0-9.]+$/.test(host))
    throw new Refused(`host ${host} is an IP address`);
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes("."))
    throw new Refused(`host ${host} is a local name`);
  return url;
}

/** Why an address may not be contacted, or null when it may. */
export function addressProblem(address: string, allowLoopback = false): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  const range = parsed.range();
  if (range === "unicast") return null;
  if (range === "loopback" && allowLoopback) return null;
  return `${address} is ${range}`;
}

/**
 * The addresses of a checked URL's host, every one of them allowed (one bad answer refuses
 * the host: a name that mixes public and private answers is a rebinding attempt).
 */
export async function resolveChecked(
  url: URL,
  resolve: Resolver,
  allowLoopback: boolean,
): Promise<string[]> {
  const host = url.hostname.replace(/\.$/, "");
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new Error(`DNS lookup of ${host} failed: ${(err as Error).message}`);
  }
  if (!addresses.length) throw new Error(`DNS lookup of ${host} found no address`);
  for (const a of addresses) {
    const problem = addressProblem(a, allowLoopback);
    if (problem) throw new Refused(`${host} resolves to ${problem}`);
  }
  return addresses;
}
