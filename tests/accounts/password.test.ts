import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ARGON2, bunHasher, passwords, portableHasher } from "../../src/platform/password";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

const PW = "correct horse battery staple";
const PHC = new RegExp(
  `^\\$argon2id\\$v=19\\$m=${ARGON2.memoryKiB},t=${ARGON2.iterations},p=${ARGON2.parallelism}\\$[A-Za-z0-9+/]+\\$[A-Za-z0-9+/]+$`,
);

describe("argon2id passwords (PHC strings)", () => {
  test("on Bun, the native Bun.password is used", () => {
    expect(bunHasher).not.toBeNull();
    expect(passwords).toBe(bunHasher as NonNullable<typeof bunHasher>);
  });

  test.each([
    ["Bun.password", () => bunHasher as NonNullable<typeof bunHasher>],
    ["hash-wasm", () => portableHasher],
  ])("%s writes argon2id PHC strings with a random salt", async (_, hasher) => {
    const a = await hasher().hash(PW);
    const b = await hasher().hash(PW);
    expect(a).toMatch(PHC);
    expect(a).not.toBe(b);
    expect(await hasher().verify(PW, a)).toBe(true);
    expect(await hasher().verify(`${PW}!`, a)).toBe(false);
  });

  test("a hash made by Bun.password verifies with hash-wasm (Deno), and the other way", async () => {
    const bun = bunHasher as NonNullable<typeof bunHasher>;
    const fromBun = await bun.hash(PW);
    const fromWasm = await portableHasher.hash(PW);
    expect(await portableHasher.verify(PW, fromBun)).toBe(true);
    expect(await bun.verify(PW, fromWasm)).toBe(true);
    expect(await portableHasher.verify("wrong password", fromBun)).toBe(false);
    expect(await bun.verify("wrong password", fromWasm)).toBe(false);
  });

  test("malformed or foreign hashes are false, never a throw", async () => {
    for (const h of ["", "plain", "$argon2id$v=19$m=1", "$2b$10$abcdefghijklmnopqrstuu"]) {
      expect(await portableHasher.verify(PW, h)).toBe(false);
      expect(await (bunHasher as NonNullable<typeof bunHasher>).verify(PW, h)).toBe(false);
    }
  });
});
