/**
 * DNS fixtures for the BIMI tests, on loopback only: TXT answers as DNS messages, served over
 * UDP (`startUdpDns`, for node:dns with setServers) and as a DNS-over-HTTPS route (`dohSite`,
 * RFC 8484 GET ?dns=, a site of web-fixtures.ts behind its proxy); messages with dns-packet.
 */
import dgram from "node:dgram";
import dnsPacket from "dns-packet";
import type { Site } from "./web-fixtures";

/** The name asked in a DNS query message. */
function questionName(query: Buffer): string {
  return dnsPacket.decode(query).questions?.[0]?.name ?? "";
}

/** The answer to a TXT query from `records` (NXDOMAIN for a name it does not have). */
export function txtResponse(query: Buffer, records: Record<string, string[]>): Buffer {
  const asked = dnsPacket.decode(query);
  const name = asked.questions?.[0]?.name ?? "";
  const texts = records[name.toLowerCase()] ?? [];
  return dnsPacket.encode({
    type: "response",
    id: asked.id ?? 0,
    // NOERROR with answers, else NXDOMAIN (rcode 3)
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (texts.length ? 0 : 3),
    questions: asked.questions ?? [],
    answers: texts.map((text) => ({
      type: "TXT" as const,
      name,
      ttl: 60,
      // one TXT record: its text in strings of at most 255 bytes
      data: (
        Buffer.from(text, "utf8")
          .toString("latin1")
          .match(/[\s\S]{1,255}/g) ?? []
      ).map((c) => Buffer.from(c, "latin1")),
    })),
  });
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
