import { systemTimers, type Timers } from "../platform/clock";
import { log } from "../platform/log";

/**
 * How long requests that arrive after SIGTERM are held before the listener closes. The runtime
 * closes idle keep-alive connections the moment it stops listening, and a request its client
 * has just sent on one would be lost (a reset). Held, every connection under load has a request
 * in flight when the listener closes; each is then answered with `Connection: close` and closed
 * after that answer.
 */
export const DRAIN_HOLD_MS = 200;

/** What the drain needs of a runtime's server. */
export interface Listener {
  /** stop accepting connections; resolves once every connection has closed */
  stop(): Promise<void> | void;
  /** close every connection now (the grace period is over) */
  forceStop(): Promise<void> | void;
  /** requests not answered yet (undefined when the runtime does not tell) */
  pending?(): number;
}

/** Probes answer at once while draining (/readyz says 503 from the first moment). */
const isProbe = (url: string) => /^[a-z]+:\/\/[^/]*\/(readyz|healthz)(\?|$)/.test(url);

function closing(res: Response): Response {
  try {
    res.headers.set("connection", "close");
    return res;
  } catch {
    // immutable headers (a fetched or static response): the same answer in a new Response
    const headers = new Headers(res.headers);
    headers.set("connection", "close");
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}

/**
 * The service's shutdown: after `run` starts, /readyz answers 503, every answer carries
 * `Connection: close`, the listener closes (after DRAIN_HOLD_MS), in-flight requests finish
 * (for at most the grace period), then `close` flushes and closes the stores.
 */
export class Drain {
  private since: number | null = null;
  private hold: Promise<void> | null = null;

  constructor(private readonly timers: Timers = systemTimers) {}

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timers.setTimeout(resolve, ms));
  }

  /** true from the start of the shutdown */
  get draining(): boolean {
    return this.since !== null;
  }

  /** The answer to `req`: the app's, and while draining held as above and closing the connection. */
  respond(
    req: Request,
    answer: (req: Request) => Response | Promise<Response>,
  ): Response | Promise<Response> {
    if (this.since === null) return answer(req);
    return this.drained(req, answer);
  }

  private async drained(req: Request, answer: (req: Request) => Response | Promise<Response>) {
    if (this.hold && !isProbe(req.url)) await this.hold;
    return closing(await answer(req));
  }

  /**
   * Drains `listener` within `graceMs`, then runs `close`. Resolves "drained" when every
   * connection closed in time, "forced" when the grace period ran out and they were cut.
   */
  async run(
    listener: Listener,
    graceMs: number,
    close: () => Promise<void>,
  ): Promise<"drained" | "forced"> {
    if (this.since !== null) return "drained";
    const since = Date.now();
    this.since = since;
    let release = () => {};
    this.hold = new Promise((resolve) => {
      release = resolve;
    });
    let graceTimer: unknown;
    const graceOver = new Promise<"forced">((resolve) => {
      graceTimer = this.timers.setTimeout(() => resolve("forced"), graceMs);
    });
    await this.sleep(Math.min(DRAIN_HOLD_MS, graceMs));
    // listener first, then the held requests: each one's connection then closes after its answer
    const stopped = Promise.resolve(listener.stop());
    this.hold = null;
    release();
    const idle = async () => {
      await stopped;
      while ((listener.pending?.() ?? 0) > 0) await this.sleep(10);
      return "drained" as const;
    };
    const outcome = await Promise.race([idle(), graceOver]);
    this.timers.clearTimeout(graceTimer);
    if (outcome === "forced") {
      log("warn", "shutdown grace period over; closing the remaining connections", {
        graceMs,
        pending: listener.pending?.(),
      });
      await listener.forceStop();
    }
    await close();
    log("info", "shut down", { outcome, ms: Date.now() - since });
    return outcome;
  }
}
