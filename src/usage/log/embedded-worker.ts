/**
 * The usage write thread (a web-standard Worker, started by embedded-thread.ts): its own
 * connection to the embedded database, on which it runs the usage log's writes (appends,
 * retention, rebuild) one message at a time, each answered once its transaction has committed.
 */
import { Database, storageCode } from "../../store/embedded/db";
import { decodeFrames } from "./batch";
import type { WriteReply, WriteRequest } from "./embedded-messages";
import { EmbeddedWrites } from "./embedded-writes";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<WriteRequest>) => void) | null;
  postMessage(message: WriteReply): void;
  close(): void;
};

let writes: EmbeddedWrites | null = null;
/** the caller's clock, as of its last message */
let now = Date.now();

async function handle(m: WriteRequest): Promise<unknown> {
  if (m.op === "open") {
    writes = new EmbeddedWrites(new Database(m.path, { busyTimeoutMs: m.busyTimeoutMs }), {
      durable: m.durable,
      hourlyDays: m.hourlyDays,
      now: () => now,
    });
    return true;
  }
  if (!writes) throw new Error("usage write thread: database not open");
  switch (m.op) {
    case "append": {
      now = m.now;
      return writes.append(decodeFrames(new Uint8Array(m.frames)).batches);
    }
    case "prune":
      return writes.prune(m.beforeDay, m.beforeHour);
    case "rebuild":
      now = m.now;
      return writes.rebuild((progress) => scope.postMessage({ id: m.id, progress }));
    case "close":
      writes.db.close();
      writes = null;
      return true;
  }
}

scope.onmessage = async (event) => {
  const m = event.data;
  try {
    scope.postMessage({ id: m.id, ok: await handle(m) });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    scope.postMessage({
      id: m.id,
      error: String(e?.message ?? err),
      code: storageCode(err) ?? e?.code ?? null,
    });
  }
  if (m.op === "close") scope.close();
};
