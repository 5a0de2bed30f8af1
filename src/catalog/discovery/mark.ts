/**
 * Mark certificates (BIMI's Verified Mark and Common Mark Certificates, VMC/CMC), checked as the
 * BIMI drafts ask before a logo counts as a verified mark. X.509 with @peculiar/x509 (WebCrypto:
 * the same code on Bun and Deno), the RFC 3709 logotype extension with
 * @peculiar/asn1-x509-logotype. Every check runs and each failure is named:
 *
 *   chain       the certificate chains, by verified signatures through CA certificates in the
 *               PEM bundle, to a trusted mark certificate root (MARK_ROOTS, DISCOVERY_VMC_ROOTS);
 *               every certificate on the way is valid at `now`
 *   self_signed the certificate signed itself (a special case of chain)
 *   validity    the certificate is valid at `now` (the service's clock at fetch time)
 *   usage       it carries the BIMI extended key usage (id-kp-BrandIndicatorforMessageIdentification)
 *   domain      a subject alternative name is the domain, or its organisational domain
 *   logotype    it has a logotype extension with an SVG image and a known hash algorithm
 *   hash        the logotype hash matches the SVG served at the record's l= URL
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { id_pe_logotype, LogotypeExtn } from "@peculiar/asn1-x509-logotype";
import { registrableDomain } from "../brand/domain";
import { MARK_ROOTS } from "./mark-roots";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
  X509ChainBuilder,
} from "./x509";

/** id-kp-BrandIndicatorforMessageIdentification */
export const BIMI_EKU = "1.3.6.1.5.5.7.3.31";

/** The name of one failed check (see the module comment). */
export type MarkCheck =
  | "certificate"
  | "chain"
  | "self_signed"
  | "validity"
  | "usage"
  | "domain"
  | "logotype"
  | "hash";

export interface MarkFailure {
  check: MarkCheck;
  reason: string;
}

export interface MarkVerdict {
  /** true only when every check passed */
  verified: boolean;
  failed: MarkFailure[];
  /** the certificate's subject organisation (O=), when it has one */
  organization: string | null;
  /** the certificate's validity end (ISO-8601), null when it could not be read */
  notAfter: string | null;
}

const HASHES: Record<string, string> = {
  "1.3.14.3.2.26": "SHA-1",
  "2.16.840.1.101.3.4.2.1": "SHA-256",
  "2.16.840.1.101.3.4.2.2": "SHA-384",
  "2.16.840.1.101.3.4.2.3": "SHA-512",
};

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text, in order (unreadable blocks are skipped). */
export function pemCertificates(pem: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    try {
      out.push(new X509Certificate(block));
    } catch {}
  }
  return out;
}

/** Trust anchors: the bundled mark certificate roots plus those of `extraPem` (PEM text). */
export function markRoots(extraPem?: string): X509Certificate[] {
  return [...MARK_ROOTS.map((r) => new X509Certificate(r.pem)), ...pemCertificates(extraPem ?? "")];
}

const hex = (b: ArrayBuffer) => Buffer.from(b).toString("hex");
const day = (d: Date) => d.toISOString().slice(0, 10);

function isCa(c: X509Certificate): boolean {
  return c.getExtension(BasicConstraintsExtension)?.ca === true;
}

/** Why `c` is not valid at `now`, or null. */
function outOfDate(c: X509Certificate, now: Date): string | null {
  if (now < c.notBefore) return `not valid before ${day(c.notBefore)}`;
  if (now > c.notAfter) return `expired on ${day(c.notAfter)}`;
  return null;
}

/** The image the logotype extension carries: its media type and hashes. */
function logotypeOf(
  c: X509Certificate,
): { mediaType: string; hashes: [string, Buffer][] } | string {
  const ext = c.getExtension(id_pe_logotype);
  if (!ext) return "the certificate has no logotype extension";
  let logo: LogotypeExtn;
  try {
    logo = AsnConvert.parse(ext.value, LogotypeExtn);
  } catch {
    return "the logotype extension does not parse";
  }
  const details = logo.subjectLogo?.direct?.image?.[0]?.imageDetails;
  if (!details) return "the logotype extension has no subject image";
  const hashes = details.logotypeHash
    .map((h): [string, Buffer] => [
      HASHES[h.hashAlg.algorithm] ?? "",
      Buffer.from(h.hashValue.buffer),
    ])
    .filter(([alg]) => alg);
  if (!hashes.length) return "the logotype hash uses no known algorithm";
  return { mediaType: details.mediaType, hashes };
}

/**
 * Check a mark certificate (PEM: the certificate first, then its issuers) for `domain` and the
 * SVG bytes served at the BIMI record's l= URL, at `now`, against the trust anchors `roots`.
 */
export async function verifyMark(
  pem: string,
  opts: { domain: string; svg: Uint8Array; now: Date; roots: X509Certificate[] },
): Promise<MarkVerdict> {
  const failed: MarkFailure[] = [];
  const fail = (check: MarkCheck, reason: string) => failed.push({ check, reason });
  const [leaf, ...bundle] = pemCertificates(pem);
  if (!leaf)
    return {
      verified: false,
      failed: [{ check: "certificate", reason: "no readable certificate in the PEM" }],
      organization: null,
      notAfter: null,
    };

  // chain: signatures verified link by link, ending at a trust anchor
  const anchors = new Set(
    await Promise.all(opts.roots.map(async (r) => hex(await r.getThumbprint()))),
  );
  if (await leaf.isSelfSigned()) {
    if (!anchors.has(hex(await leaf.getThumbprint())))
      fail("self_signed", "the certificate signed itself; no mark verifying authority issued it");
  } else {
    let chain: X509Certificate[] = [leaf];
    try {
      chain = [
        ...(await new X509ChainBuilder({ certificates: [...bundle, ...opts.roots] }).build(leaf)),
      ];
    } catch {}
    const top = chain[chain.length - 1] as X509Certificate;
    if (chain.length < 2 || !anchors.has(hex(await top.getThumbprint())))
      fail(
        "chain",
        `issued by "${top.issuer}", which does not chain to a trusted mark certificate root`,
      );
    else
      for (const ca of chain.slice(1)) {
        const stale = outOfDate(ca, opts.now);
        if (!isCa(ca)) fail("chain", `"${ca.subject}" is not a certificate authority`);
        else if (stale) fail("chain", `issuer "${ca.subject}" is ${stale}`);
      }
  }

  const stale = outOfDate(leaf, opts.now);
  if (stale) fail("validity", `the certificate is ${stale}`);

  const usages = leaf.getExtension(ExtendedKeyUsageExtension)?.usages.map(String) ?? [];
  if (!usages.includes(BIMI_EKU))
    fail("usage", "the certificate lacks the BIMI extended key usage (1.3.6.1.5.5.7.3.31)");

  const names = (leaf.getExtension(SubjectAlternativeNameExtension)?.names.items ?? [])
    .filter((n) => n.type === "dns")
    .map((n) => n.value.toLowerCase().replace(/\.$/, ""));
  const wanted = new Set([opts.domain, registrableDomain(opts.domain)].filter(Boolean));
  if (!names.some((n) => wanted.has(n)))
    fail(
      "domain",
      `the certificate names ${names.length ? names.join(", ") : "no domain"}, not ${opts.domain}`,
    );

  const logo = logotypeOf(leaf);
  if (typeof logo === "string") fail("logotype", logo);
  else if (!/^image\/svg\+xml\b/i.test(logo.mediaType))
    fail("logotype", `the logotype is ${logo.mediaType}, not an SVG`);
  else {
    let matched = false;
    for (const [alg, value] of logo.hashes) {
      const digest = Buffer.from(await crypto.subtle.digest(alg, new Uint8Array(opts.svg)));
      if (digest.equals(value)) matched = true;
    }
    if (!matched) fail("hash", "the logotype hash does not match the SVG served at l=");
  }

  const organization = leaf.subjectName.getField("O")[0]?.trim();
  return {
    verified: failed.length === 0,
    failed,
    organization: organization?.trim() || null,
    notAfter: leaf.notAfter.toISOString(),
  };
}
