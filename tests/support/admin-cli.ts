/**
 * The admin CLI run in this process (the same code as `npm run admin -- ...`), for tests that
 * point its services at loopback fixtures through a hook: the environment is set for the run
 * and restored after, stdout and stderr lines are collected.
 */
import { runAdmin } from "../../src/admin/cli";

export async function cliInProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...a: unknown[]) => out.push(a.join(" "));
  console.error = (...a: unknown[]) => err.push(a.join(" "));
  try {
    const code = await runAdmin(args);
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}
