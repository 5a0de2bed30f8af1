// Preloaded by bunfig.toml. Its afterAll hooks run after the last file of a plain `bun test`
// run, and after every file when files run on parallel workers (`npm test`, scripts/test.ts):
// each hook must leave what later files share usable (tests/support re-creates what it needs).
import { afterAll } from "bun:test";
import { installLoopbackGuard, takeOffLoopbackAttempts } from "./support/loopback-guard";
import { stopMongo } from "./support/mongo";
import { stopStripeMock } from "./support/stripe-mock";
import { removeTempDirs } from "./support/temp";

afterAll(removeTempDirs);
// the FerretDB this process started through tests/support/mongo.ts (none under npm test)
afterAll(stopMongo);
// the stripe-mock this process started through tests/support/stripe-mock.ts (none under npm test)
afterAll(stopStripeMock);

// tests contact loopback only: any other attempt throws where it is made, and fails the file
// here even when the code under test swallowed that error (tests/support/loopback-guard.ts)
installLoopbackGuard();
afterAll(() => {
  const off = takeOffLoopbackAttempts();
  if (off.length > 0)
    throw new Error(
      `this file tried to reach beyond loopback:\n  ${[...new Set(off)].join("\n  ")}`,
    );
});
