/**
 * BIMI (Brand Indicators for Message Identification) as a logo source, tried before the home
 * page's candidates: the TXT record `default._bimi.<domain>` (`v=BIMI1; l=<https URL of an
 * SVG>; a=<https URL of a PEM mark certificate>`) names the brand's square SVG logo, and a
 * mark certificate (VMC/CMC) carries the same SVG in its logotype extension.
 *
 * The TXT record comes from the system resolver (node:dns; servers settable) or, with
 * DISCOVERY_DOH_URL, from DNS over HTTPS (RFC 8484, GET ?dns=, application/dns-message)
 * through the guarded fetcher and its proxy. The SVG and the certificate are fetched through
 * the guarded fetcher too (SSRF rules, caps). Only the certificate's SVG is compared with the
 * fetched one (`verifiedMark`); its chain to a mark verifying authority is not checked.
 */
import { X509Certificate } from "node:crypto";
import { Resolver } from "node:dns/promises";
import { gunzipSync } from "node:zlib";
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
    url.searchParams.set("dns", dnsQuery(name, 16).toString("base64url"));
    const r = await fetcher.get(url.href, {
      maxBytes: DNS_MAX_BYTES,
      deadline: Date.now() + DNS_TIMEOUT_MS,
      accept: "application/dns-message",
    });
    if (r.status !== 200) throw new Error(`DoH answered HTTP ${r.status}`);
    return txtAnswers(r.body);
  };
}

/** A DNS query message for `name` and record type `type` (id 0, recursion desired). */
export function dnsQuery(name: string, type: number): Buffer {
  const header = Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  return Buffer.concat([header, encodeName(name), tail]);
}

export function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, "").split(".");
  return Buffer.concat([
    ...labels.map((l) => {
      const b = Buffer.from(l, "ascii");
      if (b.length === 0 || b.length > 63) throw new Error(`bad DNS label in ${name}`);
      return Buffer.concat([Buffer.from([b.length]), b]);
    }),
    Buffer.from([0]),
  ]);
}

/** Offset just past the (possibly compressed) name at `at`. */
function skipName(msg: Buffer, at: number): number {
  let i = at;
  for (let hops = 0; hops < 128; hops++) {
    const len = msg[i];
    if (len === undefined) throw new Error("DNS message cut short");
    if (len === 0) return i + 1;
    if ((len & 0xc0) === 0xc0) return i + 2;
    i += len + 1;
  }
  throw new Error("DNS name too long");
}

/** The TXT answers of a DNS response ([] for NXDOMAIN or no TXT answer). */
export function txtAnswers(msg: Buffer): string[] {
  if (msg.length < 12) throw new Error("DNS message cut short");
  const rcode = (msg[3] as number) & 0x0f;
  if (rcode === 3) return [];
  if (rcode !== 0) throw new Error(`DNS answered rcode ${rcode}`);
  const questions = msg.readUInt16BE(4);
  const answers = msg.readUInt16BE(6);
  let i = 12;
  for (let q = 0; q < questions; q++) i = skipName(msg, i) + 4;
  const out: string[] = [];
  for (let a = 0; a < answers; a++) {
    i = skipName(msg, i);
    const type = msg.readUInt16BE(i);
    const length = msg.readUInt16BE(i + 8);
    const start = i + 10;
    const end = start + length;
    if (end > msg.length) throw new Error("DNS message cut short");
    if (type === 16) {
      const parts: string[] = [];
      for (let j = start; j < end; ) {
        const n = msg[j] as number;
        parts.push(msg.subarray(j + 1, j + 1 + n).toString("utf8"));
        j += n + 1;
      }
      out.push(parts.join(""));
    }
    i = end;
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

/** The logotype extension (id-pe-logotype) OID, DER-encoded. */
const LOGOTYPE_OID = Buffer.from("06082b0601050507010c", "hex");

/** A DER length at `at`: [value, offset of the content]. */
function derLength(der: Buffer, at: number): [number, number] {
  const first = der[at] as number;
  if (first < 0x80) return [first, at + 1];
  const n = first & 0x7f;
  if (n > 4) throw new Error("DER length too long");
  let len = 0;
  for (let k = 1; k <= n; k++) len = len * 256 + (der[at + k] as number);
  return [len, at + 1 + n];
}

/**
 * The SVG a mark certificate carries: the first certificate of `pem`, its logotype extension,
 * the `data:image/svg+xml;base64,` URI in it (an IA5String), decoded and gunzipped when
 * gzipped. Null when there is none.
 */
export function certificateSvg(pem: string): string | null {
  const der = Buffer.from(new X509Certificate(pem).raw);
  const at = der.indexOf(LOGOTYPE_OID);
  if (at < 0) return null;
  for (let i = at + LOGOTYPE_OID.length; i < der.length - 2; i++) {
    if (der[i] !== 0x16) continue; // IA5String
    const [len, start] = derLength(der, i + 1);
    const text = der.subarray(start, start + len).toString("latin1");
    const m = /^data:image\/svg\+xml(?:;[^,;]+)*;base64,/i.exec(text);
    if (!m) continue;
    const data = Buffer.from(text.slice(m[0].length), "base64");
    const gzipped = data[0] === 0x1f && data[1] === 0x8b;
    const svg = gzipped ? gunzipSync(data, { maxOutputLength: 1024 * 1024 }) : data;
    return svg.toString("utf8");
  }
  return null;
}
