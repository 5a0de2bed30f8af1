/**
 * Starts stripe-mock (Stripe's own API test server, a Go binary) on a free loopback port, for
 * tests and local trials. `.ci/stripe-mock.sh` installs the pinned version into
 * ~/.cache/brand-api/bin; STRIPE_MOCK_BIN or a stripe-mock on PATH are used when set/present.
 *
 *   bun scripts/stripe-mock.ts     # prints STRIPE_API_BASE=http://127.0.0.1:<port>, runs until Ctrl-C
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

export interface StripeMock {
  /** http://127.0.0.1:<port>: STRIPE_API_BASE for the SDK */
  url: string;
  stop(): void;
}

/** The stripe-mock binary, or null when none is installed. */
export function findStripeMock(): string | null {
  const candidates = [
    process.env.STRIPE_MOCK_BIN,
    join(homedir(), ".cache/brand-api/bin/stripe-mock"),
    ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "stripe-mock")),
  ];
  return candidates.find((c) => c && existsSync(c)) ?? null;
}

/** Start stripe-mock on loopback (the OS picks the ports); null when it is not installed. */
export async function startStripeMock(timeoutMs = 15_000): Promise<StripeMock | null> {
  const bin = findStripeMock();
  if (!bin) return null;
  const child = spawn(bin, ["-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`stripe-mock did not start in ${timeoutMs} ms: ${out.slice(-300)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening for HTTP at address: ([\d.]+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`stripe-mock exited (${code}): ${out.slice(-300)}`));
    });
  });
  // keep draining its request log so the pipe never fills
  child.stdout?.resume();
  child.stderr?.resume();
  return { url, stop: () => child.kill() };
}

if (import.meta.main) {
  const mock = await startStripeMock();
  if (!mock) {
    console.error("stripe-mock is not installed: run bash .ci/stripe-mock.sh");
    process.exit(1);
  }
  console.log(`STRIPE_API_BASE=${mock.url}`);
  process.on("SIGINT", () => {
    mock.stop();
    process.exit(0);
  });
}
