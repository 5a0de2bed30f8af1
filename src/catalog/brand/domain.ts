/**
 * Host names from what users paste, and business e-mail domains (pure functions).
 * Public suffixes come from `tldts` (the Public Suffix List, private section included, so
 * "someone.github.io" is its own site and not GitHub); consumer mail providers from
 * `email-providers` (about 8,700 domains) plus a few well-known ones that list lacks.
 */
import consumerList from "email-providers/all.json" with { type: "json" };
import { getDomain, parse } from "tldts";

const PSL = { allowPrivateDomains: true } as const;

/** Consumer mailbox domains missing from `email-providers` at the time of writing. */
const EXTRA_CONSUMER = [
  "duck.com",
  "fastmail.com",
  "fastmail.fm",
  "posteo.de",
  "posteo.net",
  "tuta.com",
  "tuta.io",
  "tutanota.com",
  "tutanota.de",
];
/** Company domains the list carries although their staff use them for work mail. */
const NOT_CONSUMER = new Set(["bt.com", "clerk.com"]);
const CONSUMER = new Set<string>(
  [...(consumerList as string[]), ...EXTRA_CONSUMER].filter((d) => !NOT_CONSUMER.has(d)),
);

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** A lower-case ASCII (punycode) host: labels of 1..63 letters, digits, "-" or "_". */
function isHostName(host: string): boolean {
  return host.length <= 253 && host.split(".").every((l) => LABEL.test(l));
}

function isIp(host: string): boolean {
  return host.startsWith("[") || parse(host).isIp === true;
}

export type HostResult =
  | { ok: true; host: string }
  | { ok: false; reason: "invalid" | "ip_address" };

/**
 * The host a pasted domain means: "HTTPS://WWW.Example.com:8080/path?x#y" -> "example.com",
 * "bücher.de." -> "xn--bcher-kva.de". Case, scheme, user info, port, path, query, fragment,
 * trailing dots and one leading "www." are dropped; internationalized names become punycode
 * (WHATWG URL parsing). IP addresses and strings that are no host name are refused.
 */
export function normalizeHost(input: string): HostResult {
  const text = input.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  if (!text || /[\s<>"`{}|\\^]/.test(text)) return { ok: false, reason: "invalid" };
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (isIp(host)) return { ok: false, reason: "ip_address" };
  host = host.replace(/\.+$/, "");
  if (host.startsWith("www.") && host.indexOf(".", 4) > 0) host = host.slice(4);
  return isHostName(host) ? { ok: true, host } : { ok: false, reason: "invalid" };
}

/** The registrable domain of a host ("mail.google.com" -> "google.com"), or null. */
export function registrableDomain(host: string): string | null {
  return getDomain(host, PSL);
}

/**
 * Country-code top-level domains registered mostly as generic names (Google's list of
 * generic ccTLDs, plus .ai, .gg and .sh): a site there says nothing about a country.
 */
const GENERIC_CCTLDS = new Set(
  "ad as bz cc cd co dj fm io la me ms nu sc sr su tv tk ws ai gg sh".split(" "),
);

/**
 * The country of a public suffix that is a country's ("de", "co.uk" -> "uk", "com.br" -> "br"),
 * the national sites of a company; null for a generic one (".com", ".org") or a country code
 * used generically (".io").
 */
export function countryOf(suffix: string): string | null {
  const tld = suffix.slice(suffix.lastIndexOf(".") + 1);
  return /^[a-z]{2}$/.test(tld) && !(suffix === tld && GENERIC_CCTLDS.has(tld)) ? tld : null;
}

/** Whether a public suffix is a country's (see countryOf). */
export const isCountrySuffix = (suffix: string): boolean => countryOf(suffix) !== null;

/**
 * The hosts to look a brand up under, most specific first: the host itself, then each parent
 * down to its registrable domain ("a.b.example.co.uk" -> itself, "b.example.co.uk",
 * "example.co.uk"). A host without a registrable part (a public suffix, "localhost") is only
 * tried as itself.
 */
export function lookupChain(host: string): string[] {
  const chain = [host];
  const registrable = registrableDomain(host);
  if (!registrable || registrable === host || !host.endsWith(`.${registrable}`)) return chain;
  let rest = host;
  while (rest !== registrable) {
    rest = rest.slice(rest.indexOf(".") + 1);
    chain.push(rest);
  }
  return chain;
}

export function isConsumerMailDomain(host: string): boolean {
  const registrable = registrableDomain(host);
  return CONSUMER.has(host) || (registrable !== null && CONSUMER.has(registrable));
}

export type EmailResult =
  | { ok: true; host: string }
  | {
      ok: false;
      reason: "malformed" | "ip_literal" | "consumer_provider" | "no_registrable_domain";
    };

/** dot-atom local part (RFC 5322, with RFC 6531 Unicode letters) or a quoted string */
const LOCAL_PART =
  /^(?:[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*|"(?:[^"\\\r\n]|\\.)*")$/u;
const EMAIL_DOMAIN = /^[\p{L}\p{N}._-]+$/u;

/**
 * The business domain of an e-mail address, or why it has none: malformed (no single
 * local@domain with a valid local part of at most 64 characters and a valid host name), an IP
 * literal ("a@[10.0.0.1]", "a@10.0.0.1"), a consumer mail provider ("a@gmail.com",
 * "a@mail.yahoo.co.uk"), or a domain with no registrable part ("a@co.uk", "a@localhost").
 */
export function emailDomain(input: string): EmailResult {
  const email = input.trim();
  const at = email.lastIndexOf("@");
  if (at <= 0 || at === email.length - 1) return { ok: false, reason: "malformed" };
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if ([...local].length > 64 || !LOCAL_PART.test(local)) return { ok: false, reason: "malformed" };
  if (domain.startsWith("[") && domain.endsWith("]")) return { ok: false, reason: "ip_literal" };
  if (!EMAIL_DOMAIN.test(domain)) return { ok: false, reason: "malformed" };
  const host = normalizeHost(domain);
  if (!host.ok)
    return { ok: false, reason: host.reason === "ip_address" ? "ip_literal" : "malformed" };
  if (isConsumerMailDomain(host.host)) return { ok: false, reason: "consumer_provider" };
  if (!registrableDomain(host.host)) return { ok: false, reason: "no_registrable_domain" };
  return { ok: true, host: host.host };
}
