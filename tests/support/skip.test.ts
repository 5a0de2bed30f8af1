/**
 * Skips are reviewed: every test file skips through tests/support/skip.ts (`describeIf`,
 * `testIf`), which fails a suite under CI=true unless its reason is in ALLOWED_SKIPS.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALLOWED_SKIPS, whenUnmet } from "./skip";

const root = join(import.meta.dir, "../..");

describe("skips", () => {
  test("no test file skips, focuses or leaves a test to do but through tests/support/skip.ts", () => {
    const files = [...new Bun.Glob("tests/**/*.{ts,tsx}").scanSync(root)].filter(
      (f) => f !== "tests/support/skip.ts" && f !== "tests/support/skip.test.ts",
    );
    expect(files.length).toBeGreaterThan(150);
    const raw = /\b(describe|test|it)\s*\.\s*(skip|skipIf|if|only|todo|failing)\b/;
    const found = files.filter((f) => raw.test(readFileSync(join(root, f), "utf8")));
    expect(found).toEqual([]);
  });

  test("under CI=true an unmet condition fails unless its reason is allowed; elsewhere it skips", () => {
    const ci = { CI: "true" };
    expect(whenUnmet("redis-server is not installed", ci)).toBe("fail");
    expect(whenUnmet("", ci)).toBe("fail");
    for (const reason of Object.values(ALLOWED_SKIPS)) expect(whenUnmet(reason, ci)).toBe("skip");
    expect(whenUnmet("redis-server is not installed", {})).toBe("skip");
    expect(whenUnmet("redis-server is not installed", { CI: "false" })).toBe("skip");
  });
});
