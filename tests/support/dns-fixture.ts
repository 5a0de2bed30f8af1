/**
 * DNS fixtures for the BIMI tests, on loopback only: TXT answers as DNS messages, served over
 * UDP (`startUdpDns`, for node:dns with setServers) and as a DNS-over-HTTPS route (`dohSite`,
 * RFC 8484 GET ?dns=, a site of web-fixtures.ts behind its proxy); and a self-signed mark
 * certificate carrying an SVG in its logotype extension (made with openssl).
 */
import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { encodeName } from "../../src/catalog/discovery/bimi";
import { tempDir } from "./temp";
import type { Site } from "./web-fixtures";

/** The name asked in a DNS query message. */
function questionName(query: Buffer): string {
  const labels: string[] = [];
  for (let i = 12; query[i]; i += (query[i] as number) + 1)
    labels.push(query.subarray(i + 1, i + 1 + (query[i] as number)).toString("ascii"));
  return labels.join(".");
}

/** The answer to a TXT query from `records` (NXDOMAIN for a name it does not have). */
export function txtResponse(query: Buffer, records: Record<string, string[]>): Buffer {
  const name = questionName(query);
  const answers = records[name.toLowerCase()] ?? [];
  const qEnd = 12 + encodeName(name).length + 4;
  const header = Buffer.from(query.subarray(0, 12));
  header.writeUInt16BE(answers.length ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((text) => {
    const chunks: Buffer[] = [];
    const bytes = Buffer.from(text, "utf8");
    for (let i = 0; i < bytes.length; i += 255) {
      const part = bytes.subarray(i, i + 255);
      chunks.push(Buffer.from([part.length]), part);
    }
    const rdata = Buffer.concat(chunks);
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // the question's name
    fixed.writeUInt16BE(16, 2);
    fixed.writeUInt16BE(1, 4);
    fixed.writeUInt32BE(60, 6);
    fixed.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([fixed, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, qEnd), ...rrs]);
}

/** A UDP DNS server on 127.0.0.1 answering TXT queries from `records`. */
export async function startUdpDns(records: Record<string, string[]>) {
  const socket = dgram.createSocket("udp4");
  const asked: string[] = [];
  socket.on("message", (msg, peer) => {
    asked.push(questionName(msg));
    socket.send(txtResponse(msg, records), peer.port, peer.address);
  });
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    asked,
    stop: () => new Promise<void>((r) => socket.close(() => r())),
  };
}

/** A DoH endpoint at /dns-query (RFC 8484 GET) answering from `records`; `asked` logs names. */
export function dohSite(records: Record<string, string[]>, asked: string[] = []): Site {
  return {
    "/dns-query": (req) => {
      const dns = new URL(req.url).searchParams.get("dns");
      if (!dns) return new Response("no dns parameter", { status: 400 });
      const query = Buffer.from(dns, "base64url");
      asked.push(questionName(query));
      return new Response(new Uint8Array(txtResponse(query, records)), {
        headers: { "content-type": "application/dns-message" },
      });
    },
  };
}

/** A DER TLV. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const len =
    n < 0x80
      ? Buffer.from([n])
      : n < 0x100
        ? Buffer.from([0x81, n])
        : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

/**
 * The logotype extension's value (RFC 3709 LogotypeExtn, as mark certificates carry it):
 * subjectLogo, direct, one image of type image/svg+xml with its sha256 and a data: URI of the
 * gzipped SVG.
 */
export function logotypeExtension(svg: string): Buffer {
  const gz = gzipSync(Buffer.from(svg, "utf8"));
  const uri = `data:image/svg+xml;base64,${gz.toString("base64")}`;
  const sha256Oid = Buffer.from("0609608648016503040201", "hex");
  const hash = new Bun.CryptoHasher("sha256").update(svg).digest();
  const details = tlv(
    0x30,
    tlv(0x16, Buffer.from("image/svg+xml")),
    tlv(0x30, tlv(0x30, tlv(0x30, sha256Oid), tlv(0x04, Buffer.from(hash)))),
    tlv(0x30, tlv(0x16, Buffer.from(uri, "latin1"))),
  );
  const logotypeData = tlv(0xa0, tlv(0x30, tlv(0x30, details)));
  return tlv(0x30, tlv(0xa2, logotypeData));
}

/** A self-signed certificate (PEM) for `cn` carrying `svg` in its logotype extension. */
export function markCertificate(cn: string, svg: string): string {
  const dir = tempDir();
  const out = join(dir, "mark.pem");
  const r = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "30",
    "-subj",
    `/CN=${cn}`,
    "-addext",
    `1.3.6.1.5.5.7.1.12=DER:${logotypeExtension(svg).toString("hex")}`,
    "-keyout",
    join(dir, "mark.key"),
    "-out",
    out,
  ]);
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return readFileSync(out, "utf8");
}
