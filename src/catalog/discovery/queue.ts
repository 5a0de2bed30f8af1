import PQueue from "p-queue";
import { systemTimers, type Timers } from "../../platform/clock";
import { log } from "../../platform/log";

/**
 * Discovery's jobs, one per domain at a time: `workers` run at once (p-queue), at most `size`
 * wait (a job past that is dropped and counted), and a domain already queued or running is not
 * queued twice. Whoever asked may wait for its domain's job to end.
 */
export class JobQueue<J extends { domain: string }> {
  private queue: PQueue;
  /** domain -> ends its waits when the domain's job ends (or the queue closes) */
  private pending = new Map<string, () => void>();
  private waits = new Map<string, Promise<void>>();
  private closed = false;
  dropped = 0;
  /** the timers `waitFor` ends its waits with (a test moves its own) */
  timers: Timers = systemTimers;

  constructor(
    private run: (job: J) => Promise<unknown>,
    private options: { workers: number; size: number },
  ) {
    this.queue = new PQueue({ concurrency: options.workers });
  }

  /** Jobs waiting for a worker. */
  get queued(): number {
    return this.queue.size;
  }

  /** Jobs running. */
  get running(): number {
    return this.queue.pending;
  }

  /** Domains queued or running. */
  get domains(): number {
    return this.pending.size;
  }

  has(domain: string): boolean {
    return this.pending.has(domain);
  }

  /** Queue `job` unless its domain is queued or running already, or the queue is full or closed. */
  add(job: J): boolean {
    if (this.closed || this.pending.has(job.domain)) return false;
    if (this.queue.size >= this.options.size) {
      this.dropped++;
      return false;
    }
    let end = () => {};
    this.waits.set(job.domain, new Promise<void>((resolve) => (end = resolve)));
    this.pending.set(job.domain, end);
    void this.queue
      .add(() => this.run(job))
      .catch((err) =>
        log("warn", "discovery job failed", { domain: job.domain, error: String(err) }),
      )
      .finally(() => this.ended(job.domain, end));
    return true;
  }

  private ended(domain: string, end: () => void) {
    end();
    if (this.pending.get(domain) !== end) return;
    this.pending.delete(domain);
    this.waits.delete(domain);
  }

  /**
   * Waits at most `ms` for the queued or running job of `domain`: true when it ended, false
   * when it did not in time or none is queued. A promise on the job: no thread is held.
   */
  waitFor(domain: string | null, ms: number): Promise<boolean> {
    const ended = domain === null ? undefined : this.waits.get(domain);
    if (!ended || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = this.timers.setTimeout(() => resolve(false), ms);
      void ended.then(() => {
        this.timers.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Takes no more jobs and drops the waiting ones (their waits end); the running ones finish. */
  async close() {
    this.closed = true;
    this.queue.clear();
    for (const end of this.pending.values()) end();
    this.pending.clear();
    this.waits.clear();
    await this.queue.onIdle();
  }
}
