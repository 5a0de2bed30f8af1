/**
 * Waiting for a condition instead of for a time: `until(cond)` polls `cond` until it holds and
 * throws after `ms`, so a condition that never comes fails the test instead of hanging it.
 */
export async function until(
  cond: () => boolean | Promise<boolean>,
  ms = 4_000,
  what = "condition",
  everyMs = 5,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
