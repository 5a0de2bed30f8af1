/**
 * The main thread's side of the usage write thread (usage-worker.ts): it posts each write and
 * resolves with the thread's answer, which comes once the write's transaction has committed.
 * The thread starts on the first write and ends on close(). `unavailable` turns true when it
 * cannot start (no Worker, no script, an error before it answered once): the store then writes
 * on the calling thread (one warn line). A thread that dies after it started fails its pending
 * writes with UsageThreadDied; the next write starts a new one.
 */
import { log } from "../../platform/log";
import { findWorkerScript, startWorker, type WorkerLike } from "../../platform/worker-script";
import type { UsageWriteReply, UsageWriteRequest } from "./usage-messages";

/** Distributes Omit over the request union (each op keeps its own fields). */
type Request = UsageWriteRequest extends infer R
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
export class UsageThreadDied extends Error {}

/** events per message of an append (about 1-2 ms of serializing) */
const APPEND_PART = 1000;

/** The source and the bundle's entry (`npm run build`: dist/store/embedded/usage-worker.js). */
const WORKER_SCRIPTS = [
  "./usage-worker.ts",
  "./usage-worker.js",
  "./store/embedded/usage-worker.js",
] as const;

export class UsageThread {
  private worker: WorkerLike<UsageWriteRequest> | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  /** the running thread answered at least once */
  private alive = false;
  unavailable = false;
  private readonly url: URL | null;

  constructor(
    private readonly path: string,
    private readonly durable: boolean,
    url?: URL,
  ) {
    this.url =
      typeof Worker === "undefined"
        ? null
        : (url ?? findWorkerScript(WORKER_SCRIPTS, import.meta.url));
    if (!this.url) this.fail("no Worker or worker script");
  }

  /** Post a write; resolves with its result once committed, rejects with its error. */
  request<T>(req: Request, progress?: Pending["progress"]): Promise<T> {
    const call = this.call<T>(progress);
    call.worker?.postMessage({ ...req, id: call.id } as UsageWriteRequest);
    return call.done;
  }

  /**
   * Append events, posted as their stored JSON lines (`encode`) in parts of APPEND_PART events,
   * yielding to the event loop between parts: the request thread serializes and posts a big
   * batch a slice at a time; the thread stores all of it in one transaction.
   */
  async append<E>(events: readonly E[], encode: (e: E) => string, fresh: boolean) {
    const { worker, id, done } = this.call<number>();
    for (let i = 0; worker && i < events.length; i += APPEND_PART) {
      if (i > 0) {
        await new Promise((r) => setImmediate(r));
        // it died meanwhile: `done` has failed
        if (this.worker !== worker) break;
      }
      const lines = events
        .slice(i, i + APPEND_PART)
        .map(encode)
        .join("\n");
      worker.postMessage(
        i + APPEND_PART >= events.length
          ? { id, op: "append", lines, fresh }
          : { id, op: "part", lines },
      );
    }
    return done;
  }

  /** A new call's id and answer, on the running thread (started if none). */
  private call<T>(progress?: Pending["progress"]): {
    worker: WorkerLike<UsageWriteRequest> | null;
    id: number;
    done: Promise<T>;
  } {
    const id = this.nextId++;
    if (this.unavailable)
      return { worker: null, id, done: Promise.reject(new UsageThreadDied("unavailable")) };
    let worker: WorkerLike<UsageWriteRequest>;
    try {
      worker = this.worker ?? this.start();
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
      return { worker: null, id, done: Promise.reject(new UsageThreadDied("unavailable")) };
    }
    const done = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, progress });
    });
    // an append still posting its parts awaits `done` only after: its failure is handled there
    done.catch(() => {});
    worker.ref?.();
    return { worker, id, done };
  }

  private start(): WorkerLike<UsageWriteRequest> {
    const worker = startWorker<UsageWriteRequest>(this.url as URL);
    this.worker = worker;
    this.alive = false;
    worker.addEventListener("message", (event) =>
      this.answer((event as MessageEvent<UsageWriteReply>).data),
    );
    worker.addEventListener("error", (event) => {
      (event as Event & { preventDefault?: () => void }).preventDefault?.();
      this.died(worker, (event as ErrorEvent).message ?? "worker error");
    });
    worker.postMessage({ id: 0, op: "open", path: this.path, durable: this.durable });
    return worker;
  }

  private answer(reply: UsageWriteReply) {
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
   * The thread ended: its pending writes fail with UsageThreadDied. One that never answered
   * (or could not open the database) disables the thread for good.
   */
  private died(worker: WorkerLike<UsageWriteRequest> | null, reason: string, cannotOpen = false) {
    if (!worker || worker !== this.worker) return;
    this.worker = null;
    try {
      worker.terminate();
    } catch {}
    if (!this.alive || cannotOpen) this.fail(reason);
    else log("warn", "usage write thread ended; starting a new one", { reason });
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new UsageThreadDied(reason));
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
