/**
 * BIMI (Brand Indicators for Message Identification) as a logo source, tried before the home
 * page's candidates: the TXT record `default._bimi.<domain>` (`v=BIMI1; l=<https URL of an
 * SVG>; a=<https URL of a PEM mark certificate>`) names the brand's square SVG logo, and a
 * mark certificate (VMC/CMC) carries the same SVG in its logotype extension.
 *
 * The TXT record comes from the system resolver (node:dns; servers settable) or, with
 * DISCOVERY_DOH_URL, from DNS over HTTPS (RFC 8484, GET ?dns=, application/dns-message)
 * through the guarded fetcher and its proxy (DNS messages encoded and decoded with
 * dns-packet). The SVG and the certificate are fetched through the guarded fetcher too (SSRF
 * rules, caps); the certificate is checked by mark.ts.
 */
import { Resolver } from "node:dns/promises";
import dnsPacket from "dns-packet";
import type { GuardedFetcher } from "./fetcher";

/** BIMI's own cap on the SVG (the spec recommends at most 32 KB). */
export const BIMI_SVG_MAX_BYTES = 32 * 1024;
export const BIMI_PEM_MAX_BYTES = 64 * 1024;
const DNS_MAX_BYTES = 16 * 1024;
const DNS_TIMEOUT_MS = 2_000;

/** A name's TXT records, each record's strings joined; [] when it has none. */
export type TxtResolver = (name: string) => Promise<string[]>;

const NO_RECORD = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"]);

/** TXT through node:dns, on the system's servers or on `servers` ("127.0.0.1:5353"). */
export function systemTxt(servers?: string[]): TxtResolver {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  if (servers?.length) resolver.setServers(servers);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((parts) => parts.join(""));
    } catch (err) {
      if (NO_RECORD.has(String((err as { code?: string }).code))) return [];
      throw err;
    }
  };
}

/** TXT through DNS over HTTPS (RFC 8484 GET), fetched by the guarded fetcher. */
export function dohTxt(dohUrl: string, fetcher: GuardedFetcher): TxtResolver {
  return async (name) => {
    const url = new URL(dohUrl);
    url.searchParams.set("dns", dnsQuery(name).toString("base64url"));
    const r = await fetcher.get(url.href, {
      maxBytes: DNS_MAX_BYTES,
      deadline: Date.now() + DNS_TIMEOUT_MS,
      accept: "application/dns-message",
    });
    if (r.status !== 200) throw new Error(`DoH answered HTTP ${r.status}`);
    return txtAnswers(r.body);
  };
}

/** A TXT query message for `name` (id 0, as RFC 8484 asks for caching; recursion desired). */
export function dnsQuery(name: string): Buffer {
  return dnsPacket.encode({
    type: "query",
    id: 0,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: "TXT", name: name.replace(/\.$/, "") }],
  });
}

/** The TXT answers of a DNS response, each record's strings joined ([] for NXDOMAIN or none). */
export function txtAnswers(msg: Buffer): string[] {
  let decoded: dnsPacket.DecodedPacket & { rcode?: string };
  try {
    decoded = dnsPacket.decode(msg);
  } catch (err) {
    throw new Error(`DNS message does not decode: ${(err as Error).message}`);
  }
  // rcode is decoded (as a name) though the typings leave it out
  if (decoded.rcode === "NXDOMAIN") return [];
  if (decoded.rcode && decoded.rcode !== "NOERROR")
    throw new Error(`DNS answered ${decoded.rcode}`);
  const out: string[] = [];
  for (const a of decoded.answers ?? []) {
    if (a.type !== "TXT") continue;
    const parts = Array.isArray(a.data) ? a.data : [a.data];
    out.push(parts.map((p) => Buffer.from(p).toString("utf8")).join(""));
  }
  return out;
}

export interface BimiRecord {
  /** the SVG's URL, or null when the domain declines (l= empty) */
  logo: string | null;
  /** the mark certificate's URL, or null */
  certificate: string | null;
}

/** The one `v=BIMI1` record among a name's TXT records, parsed; null for none or several. */
export function parseBimi(records: string[]): BimiRecord | null {
  const bimi = records.filter((r) => /^\s*v\s*=\s*BIMI1\s*(?:;|$)/i.test(r));
  if (bimi.length !== 1) return null;
  const tags = new Map<string, string>();
  for (const part of (bimi[0] as string).split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0)
      tags.set(
        part.slice(0, eq).trim().toLowerCase(),
        part
          .slice(eq + 1)
          .trim()
          .split(",")[0] as string,
      );
  }
  return { logo: tags.get("l") || null, certificate: tags.get("a") || null };
}

/**
 * Why an SVG is not a BIMI logo (SVG Tiny PS-like: an <svg> root, a square viewBox, no
 * script, event handler, foreignObject or javascript: URL), or null when it may be one.
 */
export function tinyPsProblem(svg: string): string | null {
  const root = /<svg\b[^>]*>/i.exec(svg)?.[0];
  if (!root) return "not an SVG document";
  if (/<script\b|<foreignObject\b|\son[a-z]+\s*=|javascript:/i.test(svg))
    return "SVG has script, event handlers or foreignObject";
  const vb = /\bviewBox\s*=\s*["']([^"']+)["']/i
    .exec(root)?.[1]
    ?.trim()
    .split(/[\s,]+/);
  const w = Number(vb?.[2]);
  const h = Number(vb?.[3]);
  if (!(w > 0 && h > 0)) return "SVG has no viewBox";
  if (Math.abs(w - h) > 0.01 * Math.max(w, h)) return `SVG viewBox is ${w}x${h}, not square`;
  return null;
}
