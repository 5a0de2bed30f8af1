import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";

/** Write a small file atomically (temp file, fsync, rename) readable by the owner only. */
export function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    // a full disk: no temp file is left behind, and the old file is untouched
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The secret kept in `path`, generated (32 random bytes, base64url, mode 0600) the first time. */
export function readOrCreateSecret(path: string): string {
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // "wx": when two processes race, the first file wins and both read it
    const fd = openSync(path, "wx", 0o600);
    try {
      writeSync(fd, secret);
      fsyncSync(fd);
    } catch (err) {
      // a full disk: an empty secret file would be read as the secret next time
      rmSync(path, { force: true });
      throw err;
    } finally {
      closeSync(fd);
    }
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(path, "utf8").trim();
    throw err;
  }
}
