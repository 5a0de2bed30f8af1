import { describe, test } from "bun:test";

/**
 * Every skip in the suite goes through `describeIf` / `testIf` (tests/support/skip.test.ts
 * checks that no test file skips another way), each with its reason. Outside CI a suite whose
 * condition does not hold is skipped with that one-line reason. Under CI=true (.ci/run, which
 * installs every server and tool the suite uses) it fails instead, unless its reason is one of
 * ALLOWED_SKIPS below: the reviewed list of what CI itself may lack.
 */
export const ALLOWED_SKIPS = {
  /** tests/catalog/catalog-file.test.ts: a checkout in a folder only root can read (/root) */
  checkoutUnreadable:
    "the unprivileged user cannot read the checkout (a clone in a private folder such as /root), so a catalog file it cannot read cannot be made",
  /** tests/assets/render.test.ts: the runner itself already runs at the render threads' nice */
  runnerNiced:
    "the test runner already runs at the render threads' nice value or above, so a lower priority for them cannot be seen",
} as const;

const allowed = new Set<string>(Object.values(ALLOWED_SKIPS));

/** What happens to a suite or test whose condition does not hold: skipped, or failed under CI. */
export function whenUnmet(reason: string, env: Record<string, string | undefined> = process.env) {
  return env.CI === "true" && !allowed.has(reason) ? "fail" : "skip";
}

const told = new Set<string>();
function tell(label: string, reason: string) {
  if (told.has(label)) return;
  told.add(label);
  console.warn(`skipping "${label}": ${reason}`);
}

const cannotRun = (label: string, reason: string) => () => {
  throw new Error(
    `"${label}" would be skipped under CI (${reason}): CI installs what the suite needs (.ci/run), and skips only for a reason in ALLOWED_SKIPS (tests/support/skip.ts)`,
  );
};

type Body = () => undefined | Promise<unknown>;

/** `describe` when `ok`; else skipped with `reason` (outside CI or for an allowed reason) or failing. */
export function describeIf(ok: boolean, reason: string) {
  return (label: string, fn: () => void): void => {
    if (ok) describe(label, fn);
    else if (whenUnmet(reason) === "fail")
      describe(label, () => test("runs under CI", cannotRun(label, reason)));
    else {
      tell(label, reason);
      describe.skip(label, fn);
    }
  };
}

/** `describe` unless there is a `reason` it cannot run here (a server's "why not", say). */
export const describeUnless = (reason: string | undefined) =>
  describeIf(reason === undefined, reason ?? "");

/** Why the browser suites cannot run here. */
export const NO_CHROMIUM = "no Chromium (apt-get install chromium, or set CHROMIUM_PATH)";
/** Why the Stripe suites cannot run here. */
export const NO_STRIPE_MOCK = "stripe-mock is not installed (bash .ci/stripe-mock.sh)";
/** Why the full-disk suites cannot run here. */
export const NO_TMPFS = "mounting a tmpfs needs root";

/** `test` when `ok`; else skipped with `reason` (outside CI or for an allowed reason) or failing. */
export function testIf(ok: boolean, reason: string) {
  return (label: string, fn: Body, timeout?: number): void => {
    if (ok) test(label, fn, timeout);
    else if (whenUnmet(reason) === "fail") test(label, cannotRun(label, reason));
    else {
      tell(label, reason);
      test.skip(label, fn);
    }
  };
}
