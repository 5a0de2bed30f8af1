/**
 * Mark certificate checks (src/catalog/discovery/mark.ts) on real Verified Mark Certificates
 * (tests/fixtures/mark-certificates: DigiCert, Entrust and GlobalSign chains) against the
 * bundled roots, at a clock set inside and outside their validity; the bundled roots'
 * fingerprints; every check failing at once; and the same code under Deno.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { markRoots, pemCertificates, verifyMark } from "../../../src/catalog/discovery/mark";
import { MARK_ROOTS } from "../../../src/catalog/discovery/mark-roots";
import { X509Certificate } from "../../../src/catalog/discovery/x509";
import { ProvenanceName } from "../../../src/catalog/model";
import { PROVENANCES } from "../../../src/catalog/provenance";
import { tempDir } from "../../support/app";
import { makeMark, makeRoot } from "../../support/mark-pki";

const ROOT = join(import.meta.dir, "../../..");
const fixture = (name: string) =>
  readFileSync(join(ROOT, "tests/fixtures/mark-certificates", name), "utf8");

/** The SVG a certificate carries (as the one its owner serves at l=). */
function carriedSvg(pem: string): Uint8Array {
  const der = Buffer.from((pemCertificates(pem)[0] as X509Certificate).rawData);
  const uri = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(der.toString("latin1"));
  return gunzipSync(Buffer.from(uri?.[1] ?? "", "base64"));
}

const REAL = [
  { file: "cnn.com.pem", domain: "cnn.com", inside: "2022-01-01", after: "2022-09-01" },
  { file: "redsift.com.pem", domain: "redsift.com", inside: "2022-01-01", after: "2022-08-01" },
  {
    file: "globalsign.com.pem",
    domain: "globalsign.com",
    inside: "2025-06-01",
    after: "2026-05-01",
  },
];

describe("bundled mark certificate roots", () => {
  test("each is the published root: its SHA-256 fingerprint, a self-signed CA", async () => {
    expect(MARK_ROOTS.length).toBe(5);
    for (const r of MARK_ROOTS) {
      const cert = new X509Certificate(r.pem);
      expect(Buffer.from(await cert.getThumbprint("SHA-256")).toString("hex")).toBe(r.sha256);
      expect(await cert.isSelfSigned()).toBe(true);
      expect(cert.subject).toContain(r.name);
    }
  });

  for (const c of REAL)
    test(`a real certificate (${c.domain}) chains to them; expired after its end`, async () => {
      const pem = fixture(c.file);
      const opts = { domain: c.domain, svg: carriedSvg(pem), roots: markRoots() };
      const inside = await verifyMark(pem, { ...opts, now: new Date(c.inside) });
      expect(inside).toMatchObject({ verified: true, failed: [] });
      expect(inside.organization).toBeTruthy();
      const after = await verifyMark(pem, { ...opts, now: new Date(c.after) });
      expect(after.verified).toBe(false);
      expect(after.failed.map((f) => f.check)).toEqual(["validity"]);
      // without the bundled roots it is nobody's
      const alone = await verifyMark(pem, { ...opts, now: new Date(c.inside), roots: [] });
      expect(alone.failed.map((f) => f.check)).toEqual(["chain"]);
    });

  test("a real certificate for another domain, or with another logo, is refused by name", async () => {
    const pem = fixture("cnn.com.pem");
    const v = await verifyMark(pem, {
      domain: "example.com",
      svg: new TextEncoder().encode("<svg/>"),
      now: new Date("2022-01-01"),
      roots: markRoots(),
    });
    expect(v.failed.map((f) => f.check).sort()).toEqual(["domain", "hash"]);
  });
});

describe("every check at once", () => {
  test("a self-signed, expired certificate without the usage, for another domain and logo", async () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const leaf = await makeMark(null, {
      domains: ["elsewhere.test"],
      svg: "<svg/>",
      hashOf: "<svg>other</svg>",
      notBefore: new Date("2028-01-01"),
      notAfter: new Date("2029-01-01"),
      bimiUsage: false,
    });
    const v = await verifyMark(leaf.toString("pem"), {
      domain: "brand.test",
      svg: new TextEncoder().encode("<svg/>"),
      now,
      roots: markRoots(),
    });
    expect(v.verified).toBe(false);
    expect(v.failed.map((f) => f.check)).toEqual([
      "self_signed",
      "validity",
      "usage",
      "domain",
      "hash",
    ]);
    const none = await verifyMark("not a certificate", {
      ...{ domain: "a.test", now },
      svg: new Uint8Array(),
      roots: [],
    });
    expect(none.failed).toEqual([
      { check: "certificate", reason: "no readable certificate in the PEM" },
    ]);
  });

  test("a subdomain's certificate is checked against its organisational domain too", async () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const root = await makeRoot("Org Root", new Date("2029-01-01"), new Date("2035-01-01"));
    const svg = "<svg/>";
    const leaf = await makeMark(root, {
      domains: ["brand.test"],
      svg,
      notBefore: new Date("2029-06-01"),
      notAfter: new Date("2030-06-01"),
    });
    const v = await verifyMark(leaf.toString("pem"), {
      domain: "mail.brand.test",
      svg: new TextEncoder().encode(svg),
      now,
      roots: [root.cert],
    });
    expect(v).toMatchObject({ verified: true, failed: [] });
  });
});

test("the API's provenance names are the service's", () => {
  expect(ProvenanceName.anyOf.map((s: { const: string }) => s.const)).toEqual([...PROVENANCES]);
});

test("mark certificates and DNS messages work the same under Deno", () => {
  const svgFile = join(tempDir(), "svg");
  writeFileSync(svgFile, carriedSvg(fixture("redsift.com.pem")));
  const code = `import { readFileSync } from "node:fs";
import { dnsQuery, txtAnswers } from "./src/catalog/discovery/bimi.ts";
import { markRoots, verifyMark } from "./src/catalog/discovery/mark.ts";
const pem = readFileSync("tests/fixtures/mark-certificates/redsift.com.pem", "utf8");
const svg = readFileSync(${JSON.stringify(svgFile)});
const v = await verifyMark(pem, { domain: "redsift.com", svg, now: new Date("2022-01-01"), roots: markRoots() });
console.log(JSON.stringify({ verified: v.verified, query: dnsQuery("default._bimi.a.test").length, none: txtAnswers(dnsQuery("x.test")) }));`;
  // deno eval runs in the checkout: its package.json resolves the npm packages
  const r = spawnSync(join(ROOT, "node_modules/.bin/deno"), ["eval", "--ext=ts", code], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(r.stderr).not.toMatch(/error/i);
  expect(JSON.parse(r.stdout.trim().split("\n").pop() as string)).toEqual({
    verified: true,
    query: 38,
    none: [],
  });
}, 120_000);
