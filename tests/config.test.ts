import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";
import { SERVICE_CMD } from "./support/app";

describe("config", () => {
  test("defaults need no environment at all", () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATA_DIR).toBe("./data");
    expect(c.MONGODB_URL).toBeUndefined();
    expect(c.COUNTER_TIMEOUT_MS).toBe(150);
    expect(c.TRUST_PROXY).toBe(false);
  });

  test("parses numbers and booleans", () => {
    const c = loadConfig({ PORT: "8080", TRUST_PROXY: "true", RENDER_CACHE_MB: "16" });
    expect(c.PORT).toBe(8080);
    expect(c.TRUST_PROXY).toBe(true);
    expect(c.RENDER_CACHE_MB).toBe(16);
  });

  test.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["MONGODB_URL", "postgres://x"],
    ["UPGRADE_URL", "not a url"],
    ["TRUST_PROXY", "maybe"],
    ["ADMIN_TOKEN", "short"],
    ["LOG_LEVEL", "loud"],
    ["USAGE_DURABILITY", "sometimes"],
  ])("a bad %s stops start-up with a one-line message naming it", (name, value) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message.startsWith(`${name}:`)).toBe(true);
    expect(message).not.toContain("\n");
  });

  test("an Upstash URL without its token is refused", () => {
    expect(() => loadConfig({ UPSTASH_REDIS_REST_URL: "http://127.0.0.1:1" })).toThrow(
      "UPSTASH_REDIS_REST_TOKEN",
    );
  });

  test("the server exits with the message on a bad value", async () => {
    const proc = Bun.spawn(SERVICE_CMD, {
      env: { ...process.env, PORT: "not-a-port" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(1);
    const err = await new Response(proc.stderr).text();
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain("PORT:");
  });
});
