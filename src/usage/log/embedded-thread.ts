/**
 * The main thread's side of the usage write thread (embedded-worker.ts): it posts each write and
 * resolves with the thread's answer, which comes once the write's transaction has committed.
 * The thread starts on the first write and ends on close(). `unavailable` turns true when it
 * cannot start (no Worker, no script, an error before it answered once): the store then writes
 * on the calling thread (one warn line). A thread that dies after it started fails its pending
 * writes with WriteThreadDied; the next write starts a new one.
 */
import { log } from "../../platform/log";
import { findWorkerScript, startWorker, type WorkerLike } from "../../platform/worker-script";
import type { WriteReply, WriteRequest } from "./embedded-messages";

/** Distributes Omit over the request union (each op keeps its own fields). */
type Request = WriteRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, "id">
    : never
  : never;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  progress?(p: { day: string; events: number }): void;
}

/** The thread ended (or could not start) before it answered: the write may or may not be in. */
export class WriteThreadDied extends Error {}

/** The source and the bundle's entry (`npm run build`: dist/usage/log/embedded-worker.js). */
const WORKER_SCRIPTS = [
  "./embedded-worker.ts",
  "./embedded-worker.js",
  "./usage/log/embedded-worker.js",
] as const;

type Worker2 = WorkerLike<WriteRequest> & {
  postMessage(message: WriteRequest, transfer?: Transferable[]): void;
};

export class WriteThread {
  private worker: Worker2 | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  /** the running thread answered at least once */
  private alive = false;
  unavailable = false;
  private readonly url: URL | null;

  constructor(
    private readonly open: Omit<Extract<WriteRequest, { op: "open" }>, "op" | "id">,
    url?: URL,
  ) {
    this.url =
      typeof Worker === "undefined"
        ? null
        : (url ?? findWorkerScript(WORKER_SCRIPTS, import.meta.url));
    if (!this.url) this.fail("no Worker or worker script");
  }

  /** Post a write (its ArrayBuffers in `transfer` moved, not copied); resolves once committed. */
  request<T>(
    req: Request,
    transfer: Transferable[] = [],
    progress?: Pending["progress"],
  ): Promise<T> {
    const id = this.nextId++;
    if (this.unavailable) return Promise.reject(new WriteThreadDied("unavailable"));
    let worker: Worker2;
    try {
      worker = this.worker ?? this.start();
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
      return Promise.reject(new WriteThreadDied("unavailable"));
    }
    const done = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, progress });
    });
    worker.ref?.();
    worker.postMessage({ ...req, id } as WriteRequest, transfer);
    return done;
  }

  private start(): Worker2 {
    const worker = startWorker<WriteRequest>(this.url as URL) as Worker2;
    this.worker = worker;
    this.alive = false;
    worker.addEventListener("message", (event) =>
      this.answer((event as MessageEvent<WriteReply>).data),
    );
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      this.died(worker, (event as ErrorEvent).message ?? "worker error");
    });
    worker.postMessage({ id: 0, op: "open", ...this.open });
    return worker;
  }

  private answer(reply: WriteReply) {
    if (reply.id === 0) {
      if ("error" in reply) this.died(this.worker, reply.error, true);
      else this.alive = true;
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return;
    if ("progress" in reply) return p.progress?.(reply.progress);
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref?.();
    if ("ok" in reply) return p.resolve(reply.ok);
    const err = new Error(reply.error) as NodeJS.ErrnoException;
    if (reply.code) err.code = reply.code;
    p.reject(err);
  }

  /**
   * The thread ended: its pending writes fail with WriteThreadDied. One that never answered (or
   * could not open the database) disables the thread for good.
   */
  private died(worker: Worker2 | null, reason: string, cannotOpen = false) {
    if (!worker || worker !== this.worker) return;
    this.worker = null;
    try {
      worker.terminate();
    } catch {}
    if (!this.alive || cannotOpen) this.fail(reason);
    else log("warn", "usage write thread ended; starting a new one", { reason });
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new WriteThreadDied(reason));
  }

  private fail(reason: string) {
    if (this.unavailable) return;
    this.unavailable = true;
    log("warn", "usage write thread unavailable; writing usage on the request thread", { reason });
  }

  /** End the thread abruptly, as a crash would (tests). */
  kill() {
    this.died(this.worker, "killed");
  }

  /** Wait for the writes posted so far, then end the thread (its connection closed). */
  async close() {
    const worker = this.worker;
    if (!worker) return;
    try {
      await this.request({ op: "close" });
    } catch {}
    if (this.worker === worker) this.worker = null;
    worker.terminate();
  }
}
