/**
 * The usage write thread (a web-standard Worker, started by usage-thread.ts): its own
 * connection to the embedded database, on which it runs the usage store's writes (appends,
 * prune, rebuild) one message at a time, each answered once its transaction has committed.
 */
import { Database, storageCode } from "./db";
import { EmbeddedUsageStore } from "./usage";

export type UsageWriteRequest = { id: number } & (
  | { op: "open"; path: string; durable: boolean }
  | { op: "append"; lines: string; fresh: boolean }
  | { op: "prune"; beforeDay: string }
  | { op: "rebuild" }
  | { op: "close" }
);

export type UsageWriteReply =
  | { id: number; ok: unknown }
  | { id: number; progress: { day: string; events: number } }
  | { id: number; error: string; code: string | null };

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<UsageWriteRequest>) => void) | null;
  postMessage(message: UsageWriteReply): void;
  close(): void;
};

let store: EmbeddedUsageStore | null = null;

async function handle(m: UsageWriteRequest): Promise<unknown> {
  if (m.op === "open") {
    store = new EmbeddedUsageStore(new Database(m.path), { durable: m.durable, writer: "inline" });
    return true;
  }
  if (!store) throw new Error("usage write thread: database not open");
  switch (m.op) {
    case "append":
      return store.ingestLines(m.lines.split("\n"), { fresh: m.fresh });
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
