/**
 * The usage write thread (a web-standard Worker, started by usage-thread.ts): its own
 * connection to the embedded database, on which it runs the usage store's writes (appends,
 * prune, rebuild) one message at a time, each answered once its transaction has committed.
 */
import { Database, storageCode } from "./db";
import { EmbeddedUsageStore } from "./usage";
import type { UsageWriteReply, UsageWriteRequest } from "./usage-messages";

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<UsageWriteRequest>) => void) | null;
  postMessage(message: UsageWriteReply): void;
  close(): void;
};

let store: EmbeddedUsageStore | null = null;
/** the lines of appends posted in parts, by request id, until their last part */
const parts = new Map<number, string[]>();

async function handle(m: UsageWriteRequest): Promise<unknown> {
  if (m.op === "open") {
    store = new EmbeddedUsageStore(new Database(m.path), { durable: m.durable, writer: "inline" });
    return true;
  }
  if (!store) throw new Error("usage write thread: database not open");
  switch (m.op) {
    case "append": {
      const lines = (parts.get(m.id) ?? []).concat(m.lines.split("\n"));
      parts.delete(m.id);
      return store.ingestLines(lines, { fresh: m.fresh });
    }
    case "prune":
      return store.prune(m.beforeDay);
    case "rebuild":
      return store.rebuildDaily((progress) => scope.postMessage({ id: m.id, progress }));
    case "close":
      store.db.close();
      store = null;
      return true;
  }
}

scope.onmessage = async (event) => {
  const m = event.data;
  if (m.op === "part") {
    const lines = m.lines.split("\n");
    const got = parts.get(m.id);
    if (got) for (const l of lines) got.push(l);
    else parts.set(m.id, lines);
    return;
  }
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
