import { describe, expect, test } from "bun:test";
import { emailIndex, newDataKey, normalizeEmail, seal, unseal } from "../../src/accounts/pii";

describe("sealed personal data", () => {
  test("seal hides the plaintext; unseal needs the same key and account", async () => {
    const key = newDataKey();
    const sealed = await seal(key, "acct-1", "ann@example.com");
    expect(sealed).toStartWith("v1.");
    expect(sealed).not.toContain("ann");
    expect(await seal(key, "acct-1", "ann@example.com")).not.toBe(sealed);
    expect(await unseal(key, "acct-1", sealed)).toBe("ann@example.com");
    await expect(unseal(newDataKey(), "acct-1", sealed)).rejects.toThrow();
    await expect(unseal(key, "acct-2", sealed)).rejects.toThrow();
  });

  test("the e-mail index is an HMAC of the normalized address under the server secret", () => {
    expect(normalizeEmail("  Ann@Example.COM ")).toBe("ann@example.com");
    const i = emailIndex("secret-a", "Ann@Example.com");
    expect(i).toMatch(/^[0-9a-f]{64}$/);
    expect(emailIndex("secret-a", "ann@example.com")).toBe(i);
    expect(emailIndex("secret-b", "ann@example.com")).not.toBe(i);
    expect(emailIndex("secret-a", "bob@example.com")).not.toBe(i);
  });
});
