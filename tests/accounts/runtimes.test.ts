import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { SERVICE_CMD, tempDir } from "../support/app";
import { expectError } from "../support/errors";
import { startService } from "../support/service";

const ROOT = join(import.meta.dir, "../..");
const procs: Subprocess[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
});

const BUN = SERVICE_CMD;
const DENO = [join(ROOT, "node_modules/.bin/deno"), "run", "-A", "src/deno.ts"];

/** Run `steps` against a real server process (Bun or Deno entry) on `dataDir`, then stop it. */
async function withServer(cmd: string[], dataDir: string, steps: (base: string) => Promise<void>) {
  const { base, proc } = await startService({ cmd, dataDir });
  procs.push(proc);
  try {
    await steps(base);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

test("a password hashed under Deno (hash-wasm) logs in under Bun (Bun.password), and the other way", async () => {
  const dataDir = tempDir();
  const pw = "portable argon2id hash";
  await withServer(DENO, dataDir, async (base) => {
    expect(
      (await post(base, "/auth/register", { email: "deno@example.com", password: pw })).status,
    ).toBe(201);
  });
  await withServer(BUN, dataDir, async (base) => {
    expect(
      (await post(base, "/auth/login", { email: "deno@example.com", password: pw })).status,
    ).toBe(200);
    await expectError(
      await post(base, "/auth/login", { email: "deno@example.com", password: `${pw}!` }),
      401,
      "invalid_credentials",
    );
    expect(
      (await post(base, "/auth/register", { email: "bun@example.com", password: pw })).status,
    ).toBe(201);
  });
  await withServer(DENO, dataDir, async (base) => {
    const login = await post(base, "/auth/login", { email: "bun@example.com", password: pw });
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const me = await fetch(`${base}/auth/me`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(((await me.json()) as { email: string }).email).toBe("bun@example.com");
  });
}, 120_000);
