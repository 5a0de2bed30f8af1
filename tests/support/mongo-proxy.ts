/**
 * A loopback TCP proxy in front of a MongoDB-wire server that can lose one reply: the command
 * reaches the server and runs there, but the client's connection is cut instead of answered, as
 * when a network fails after a write committed. It can also refuse writes as a server whose disk
 * is full does: the command never reaches the server and is answered with MongoDB's
 * OutOfDiskSpace error. Messages are read as the wire protocol frames them (a 16-byte header:
 * length, requestID, responseTo, opCode); an OP_MSG's first section is the command document.
 *
 *   const proxy = await startMongoProxy(mongo.url);
 *   proxy.dropReplyTo("insert", "usage_events");   // the next such command's reply is lost
 *   proxy.refuseWrites(/^usage_/);                 // writes to these collections fail, until null
 *   new MongoClient(proxy.url, { retryWrites: false });
 */
import { connect, createServer, type Socket } from "node:net";
import { BSON } from "mongodb";

const OP_MSG = 2013;

export interface MongoProxy {
  url: string;
  /** lose the reply to the next `command` on `collection` (once) */
  dropReplyTo(command: string, collection: string): void;
  /** refuse every write to a collection `collections` matches (a full disk); null: let them pass */
  refuseWrites(collections: RegExp | null): void;
  /** replies lost so far */
  readonly dropped: number;
  /** writes refused so far */
  readonly refused: number;
  stop(): Promise<void>;
}

/** Split complete wire messages off a buffer: [messages, rest]. */
function frames(buf: Buffer): [Buffer[], Buffer] {
  const out: Buffer[] = [];
  let at = 0;
  while (buf.length - at >= 4) {
    const len = buf.readInt32LE(at);
    if (buf.length - at < len) break;
    out.push(buf.subarray(at, at + len));
    at += len;
  }
  return [out, buf.subarray(at)];
}

/** The command document of an OP_MSG (its kind-0 section), or null. */
function commandOf(msg: Buffer): Record<string, unknown> | null {
  if (msg.readInt32LE(12) !== OP_MSG) return null;
  let at = 20; // header, flagBits
  while (at < msg.length) {
    const kind = msg[at] as number;
    const size = msg.readInt32LE(at + 1);
    if (kind === 0) return BSON.deserialize(msg.subarray(at + 1, at + 1 + size));
    at += 1 + size;
  }
  return null;
}

const WRITES = ["insert", "update", "delete", "findAndModify"];

/** The collection a write command names, or null when `cmd` is no write. */
function writeTarget(cmd: Record<string, unknown>): string | null {
  for (const w of WRITES) if (typeof cmd[w] === "string") return cmd[w] as string;
  return null;
}

/** The OP_MSG answering request `requestId` with `doc`. */
function reply(requestId: number, doc: Record<string, unknown>): Buffer {
  const body = BSON.serialize(doc);
  const msg = Buffer.alloc(16 + 4 + 1 + body.length);
  msg.writeInt32LE(msg.length, 0);
  msg.writeInt32LE(0, 4);
  msg.writeInt32LE(requestId, 8);
  msg.writeInt32LE(OP_MSG, 12);
  msg.writeUInt32LE(0, 16); // flagBits
  msg[20] = 0; // a kind-0 section: the document
  Buffer.from(body).copy(msg, 21);
  return msg;
}

/** What a MongoDB server whose disk is full answers a write (code 14031). */
const OUT_OF_DISK = {
  ok: 0,
  code: 14031,
  codeName: "OutOfDiskSpace",
  errmsg: "Command rejected: the server's disk is full",
};

export async function startMongoProxy(target: string): Promise<MongoProxy> {
  const { hostname, port } = new URL(target.replace(/^mongodb:/, "http:"));
  let armed: { command: string; collection: string } | null = null;
  let dropped = 0;
  let refusing: RegExp | null = null;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host: hostname, port: Number(port) });
    sockets.add(client);
    sockets.add(upstream);
    /** requestIDs whose reply is to be lost */
    const lose = new Set<number>();
    let fromClient: Buffer = Buffer.alloc(0);
    let fromServer: Buffer = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      let msgs: Buffer[];
      [msgs, fromClient] = frames(Buffer.concat([fromClient, chunk]));
      for (const msg of msgs) {
        if (refusing) {
          const target = commandOf(msg);
          const coll = target && writeTarget(target);
          if (coll && refusing.test(coll)) {
            refused++;
            client.write(reply(msg.readInt32LE(4), OUT_OF_DISK));
            continue;
          }
        }
        const cmd = armed && commandOf(msg);
        if (cmd && armed && cmd[armed.command] === armed.collection) {
          lose.add(msg.readInt32LE(4));
          armed = null;
        }
        upstream.write(msg);
      }
    });
    upstream.on("data", (chunk: Buffer) => {
      let msgs: Buffer[];
      [msgs, fromServer] = frames(Buffer.concat([fromServer, chunk]));
      for (const msg of msgs) {
        if (lose.has(msg.readInt32LE(8))) {
          // the command ran; its client never hears of it
          dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(msg);
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `mongodb://127.0.0.1:${address.port}/?directConnection=true`,
    dropReplyTo(command, collection) {
      armed = { command, collection };
    },
    refuseWrites(collections) {
      refusing = collections;
    },
    get dropped() {
      return dropped;
    },
    get refused() {
      return refused;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
