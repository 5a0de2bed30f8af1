/**
 * A PKI made by the tests. For BIMI: a mark certificate root of their own (given to the app
 * through DISCOVERY_VMC_ROOTS), an intermediate, and mark certificates with the BIMI extended
 * key usage, a subject alternative name and an RFC 3709 logotype extension carrying an SVG and
 * its hash, each part changeable to make the certificates discovery must refuse. For https
 * fixture sites: server certificates for any test host names. Made with
 * @peculiar/x509 and @peculiar/asn1-x509-logotype (ECDSA P-256 through WebCrypto).
 */
import { gzipSync } from "node:zlib";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier } from "@peculiar/asn1-x509";
import {
  HashAlgAndValue,
  id_pe_logotype,
  LogotypeData,
  LogotypeDetails,
  LogotypeExtn,
  LogotypeImage,
  LogotypeInfo,
} from "@peculiar/asn1-x509-logotype";
import { BIMI_EKU } from "../../src/catalog/discovery/mark";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  type X509Certificate,
  X509CertificateGenerator,
} from "../../src/catalog/discovery/x509";

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const SHA256_OID = "2.16.840.1.101.3.4.2.1";
const SHA1_OID = "1.3.14.3.2.26";

export interface Authority {
  cert: X509Certificate;
  keys: CryptoKeyPair;
}

const newKeys = () =>
  crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;

let serial = 1;
const nextSerial = () => (serial++).toString(16).padStart(2, "0");

/** A self-signed CA (a mark certificate root of the tests' own), valid from..to. */
export async function makeRoot(name: string, notBefore: Date, notAfter: Date): Promise<Authority> {
  const keys = await newKeys();
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${name}, O=Test Mark Verifying Authority`,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new BasicConstraintsExtension(true, 1, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
    ],
  });
  return { cert, keys };
}

/** A CA issued by `issuer`. */
export async function makeIntermediate(
  issuer: Authority,
  name: string,
  notBefore: Date,
  notAfter: Date,
): Promise<Authority> {
  const keys = await newKeys();
  const cert = await X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: `CN=${name}, O=Test Mark Verifying Authority`,
    issuer: issuer.cert.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new BasicConstraintsExtension(true, 0, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
    ],
  });
  return { cert, keys };
}

/** The logotype extension's value: one SVG image, its hash (`hashOf`, SHA-256 unless "sha1") and a data: URI. */
export function logotype(svg: string, hashOf = svg, alg: "sha256" | "sha1" = "sha256"): Buffer {
  const digest = new Bun.CryptoHasher(alg).update(hashOf).digest();
  const details = new LogotypeDetails({
    mediaType: "image/svg+xml",
    logotypeHash: [
      new HashAlgAndValue({
        hashAlg: new AlgorithmIdentifier({ algorithm: alg === "sha1" ? SHA1_OID : SHA256_OID }),
        hashValue: new OctetString(digest),
      }),
    ],
    logotypeURI: [`data:image/svg+xml;base64,${gzipSync(svg).toString("base64")}`],
  });
  const extn = new LogotypeExtn({
    subjectLogo: new LogotypeInfo({
      direct: new LogotypeData({ image: [new LogotypeImage({ imageDetails: details })] }),
    }),
  });
  return Buffer.from(AsnConvert.serialize(extn));
}

export interface MarkOptions {
  /** the subject alternative names (dNSName) */
  domains: string[];
  svg: string;
  notBefore: Date;
  notAfter: Date;
  /** the SVG the logotype hash is of (default: svg) */
  hashOf?: string;
  /** false: no BIMI extended key usage (server authentication instead) */
  bimiUsage?: boolean;
  /** the subject organisation */
  organization?: string;
}

/** A mark certificate for `opts.domains` issued by `issuer`, or signed by itself when null. */
export async function makeMark(
  issuer: Authority | null,
  opts: MarkOptions,
): Promise<X509Certificate> {
  const keys = await newKeys();
  const subject = `CN=${opts.organization ?? "Test Brand"}, O=${opts.organization ?? "Test Brand"}`;
  const extensions = [
    new BasicConstraintsExtension(false, undefined, true),
    new ExtendedKeyUsageExtension(
      [opts.bimiUsage === false ? "1.3.6.1.5.5.7.3.1" : BIMI_EKU],
      false,
    ),
    new SubjectAlternativeNameExtension(
      opts.domains.map((value) => ({ type: "dns" as const, value })),
    ),
    new Extension(id_pe_logotype, false, new Uint8Array(logotype(opts.svg, opts.hashOf))),
  ];
  const common = {
    serialNumber: nextSerial(),
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    signingAlgorithm: ALG,
    extensions,
  };
  return issuer
    ? X509CertificateGenerator.create({
        ...common,
        subject,
        issuer: issuer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: issuer.keys.privateKey,
      })
    : X509CertificateGenerator.createSelfSigned({ ...common, name: subject, keys });
}

/**
 * A TLS server certificate for `hosts` issued by `issuer` (a test CA given to discovery through
 * DISCOVERY_CA_FILE), valid from a day before now for 30 days: TLS checks the real clock.
 */
export async function makeServerCert(
  issuer: Authority,
  hosts: string[],
): Promise<{ hosts: string[]; cert: string; key: string }> {
  const keys = await newKeys();
  const cert = await X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: `CN=${hosts[0]}`,
    issuer: issuer.cert.subject,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 30 * 86_400_000),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new BasicConstraintsExtension(false, undefined, true),
      new ExtendedKeyUsageExtension(["1.3.6.1.5.5.7.3.1"], false),
      new SubjectAlternativeNameExtension(hosts.map((value) => ({ type: "dns" as const, value }))),
    ],
  });
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END PRIVATE KEY-----\n`;
  return { hosts, cert: `${cert.toString("pem")}\n${issuer.cert.toString("pem")}`, key };
}

/** A PEM bundle: the certificate, then its issuers. */
export const pemOf = (...certs: X509Certificate[]) =>
  certs.map((c) => c.toString("pem")).join("\n");
