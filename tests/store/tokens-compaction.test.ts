import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { COMPACT_MIN_LINES, EmbeddedTokenStore } from "../../src/store/embedded/accounts-tokens";
import { tempDir } from "../support/app";

test("the embedded token log drops expired and removed tokens when it is reopened", async () => {
  const dir = tempDir();
  let now = 1_000_000;
  const store = new EmbeddedTokenStore(dir, () => now);
  const rec = (i: number, ttl: number) => ({
    hash: `h${i}`,
    kind: "refresh" as const,
    accountId: i % 2 ? "a" : "b",
    family: `f${i}`,
    createdAt: now,
    expiresAt: now + ttl,
    usedAt: null,
    revokedAt: null,
  });
  for (let i = 0; i < COMPACT_MIN_LINES; i++) await store.put(rec(i, 1000));
  await store.put(rec(-1, 10_000_000));
  await store.use("h-1", now + 1);
  store.close();
  now += 5000; // all but h-1 have expired
  const reopened = new EmbeddedTokenStore(dir, () => now);
  const lines = readFileSync(join(dir, "tokens.jsonl"), "utf8").trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(await reopened.get("h-1")).toMatchObject({ usedAt: 1_000_001 });
  expect(await reopened.get("h5")).toBeNull();
  // and it keeps appending after the rewrite
  await reopened.put(rec(7, 1000));
  reopened.close();
  const again = new EmbeddedTokenStore(dir, () => now);
  expect(await again.get("h7")).not.toBeNull();
  again.close();
});
