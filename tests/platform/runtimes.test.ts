import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { SERVICE_CMD, tempDir } from "../support/app";
import { adminKey, startService } from "../support/service";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "../..");
const procs: Subprocess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Start an entry point as a real process, create a key over HTTP, fetch a catalog entry. */
async function startAndFetch(cmd: string[]) {
  const dataDir = tempDir();
  dirs.push(dataDir);
  // LOG_LEVEL info: the start-up banner is read back from stdout
  const { base, proc } = await startService({
    cmd,
    dataDir,
    env: { LOG_LEVEL: "info" },
    stdout: "pipe",
    readyMs: 30_000,
  });
  procs.push(proc);
  const { apiKey } = await adminKey(base);
  const res = await fetch(`${base}/v1/catalog/github`, { headers: { "x-api-key": apiKey } });
  expect(res.status).toBe(200);
  expect((await res.json()).name).toBe("GitHub");
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  // the API reference comes from the swagger-ui-dist package on every runtime and in the bundle
  for (const path of ["/swagger/", "/swagger/swagger-ui-bundle.js", "/swagger/json"])
    expect(`${path} ${(await fetch(`${base}${path}`)).status}`).toBe(`${path} 200`);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  return new Response(proc.stdout as ReadableStream).text();
}

describe("runtimes", () => {
  test("Bun: npm start's entry serves and prints its address and docs", async () => {
    const out = await startAndFetch(SERVICE_CMD);
    // stdout is JSON lines only, the start-up banner included
    const lines = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const banner = lines.find((l) => l.msg === "Brand Asset API listening");
    expect(banner).toMatchObject({
      level: "info",
      url: expect.stringMatching(/^http:\/\/localhost:\d+$/),
      docs: expect.stringMatching(/\/swagger$/),
      openapi: expect.stringMatching(/\/swagger\/json$/),
    });
  });

  test("Deno: src/deno.ts serves the same app with Deno.serve", async () => {
    const deno = join(ROOT, "node_modules/.bin/deno");
    await startAndFetch([deno, "run", "-A", "src/deno.ts"]);
  });

  test("the bun build bundle starts with bun dist/main.js", async () => {
    // exactly what `npm run build` runs (see package.json), with this Bun rather than a `bun`
    // on PATH: ./node_modules/.bin/bun test works where no global Bun is installed
    const script = (await Bun.file(join(ROOT, "package.json")).json()).scripts.build as string;
    expect(script).toStartWith("bun build ");
    const args = script.slice("bun ".length).split(/\s+/);
    const build = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, stderr: "pipe" });
    expect({ exit: build.exitCode, stderr: build.stderr.toString() }).toEqual({
      exit: 0,
      stderr: "",
    });
    await startAndFetch([process.execPath, "dist/main.js"]);
  });
});
