import { argon2id, argon2Verify } from "hash-wasm";

/**
 * argon2id password hashes in the PHC string format (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`).
 * On Bun: its native `Bun.password`; elsewhere (Deno, Node): hash-wasm's portable argon2id.
 * Both read and write the same format, so a hash made under one runtime verifies under the other.
 * Parameters: OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane).
 */
export const ARGON2 = { memoryKiB: 19456, iterations: 2, parallelism: 1, hashLength: 32 } as const;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, phc: string): Promise<boolean>;
}

type BunPassword = {
  hash(
    pw: string,
    o: { algorithm: "argon2id"; memoryCost: number; timeCost: number },
  ): Promise<string>;
  verify(pw: string, hash: string): Promise<boolean>;
};
const bunPassword = (globalThis as { Bun?: { password?: BunPassword } }).Bun?.password;

/** Bun's native argon2id (only where Bun runs). */
export const bunHasher: PasswordHasher | null = bunPassword
  ? {
      hash: (pw) =>
        bunPassword.hash(pw, {
          algorithm: "argon2id",
          memoryCost: ARGON2.memoryKiB,
          timeCost: ARGON2.iterations,
        }),
      async verify(pw, phc) {
        if (!phc.startsWith("$argon2")) return false;
        try {
          return await bunPassword.verify(pw, phc);
        } catch {
          return false;
        }
      },
    }
  : null;

/** hash-wasm's argon2id (WebAssembly): runs on every runtime. */
export const portableHasher: PasswordHasher = {
  hash: (pw) =>
    argon2id({
      password: pw,
      salt: crypto.getRandomValues(new Uint8Array(16)),
      parallelism: ARGON2.parallelism,
      iterations: ARGON2.iterations,
      memorySize: ARGON2.memoryKiB,
      hashLength: ARGON2.hashLength,
      outputType: "encoded",
    }),
  async verify(pw, phc) {
    if (!phc.startsWith("$argon2")) return false;
    try {
      return await argon2Verify({ password: pw, hash: phc });
    } catch {
      return false;
    }
  },
};

/** The hasher of this runtime. */
export const passwords: PasswordHasher = bunHasher ?? portableHasher;
