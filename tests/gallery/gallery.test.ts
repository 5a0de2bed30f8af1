import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { GALLERY_SEARCH_LIMIT } from "../../src/gallery/model";
import { makeApp, type TestApp } from "../support/app";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ TRUST_PROXY: "true" });
});
afterAll(() => t.close());

/** A request from one client IP (TRUST_PROXY=true honours X-Forwarded-For). */
const from = (ip: string, path: string) => t.req(path, { headers: { "x-forwarded-for": ip } });

describe("public gallery", () => {
  test("search without a key: slug, name and brand colour, best first", async () => {
    const r = await from("198.51.100.1", "/v1/gallery/search?q=stripe&limit=3");
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      matches: { slug: string; name: string; brandColor: string | null }[];
    };
    expect(body.matches.length).toBeLessThanOrEqual(3);
    expect(body.matches[0]).toEqual({ slug: "stripe", name: "Stripe", brandColor: "635bff" });
  });

  test("a thumbnail is a PNG of the asked size, cacheable, drawn without a key", async () => {
    const r = await from("198.51.100.2", "/v1/gallery/github/thumbnail?size=64");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    expect(r.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(r.headers.get("x-svg-variant")).toBe("mono");
    const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
    expect(meta.format).toBe("png");
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBe(64);
    const color = await from("198.51.100.2", "/v1/gallery/stripe/thumbnail?variant=color&size=32");
    expect(color.status).toBe(200);
    expect(color.headers.get("x-svg-variant")).toBe("color");
  });

  test("bad input: 422 validation_error; unknown slug: 404 service_not_found", async () => {
    for (const path of [
      "/v1/gallery/search?q=",
      "/v1/gallery/search?q=stripe&limit=50",
      "/v1/gallery/github/thumbnail?size=512",
      "/v1/gallery/github/thumbnail?variant=wordmark",
    ]) {
      const r = await from("198.51.100.3", path);
      expect({ path, status: r.status }).toEqual({ path, status: 422 });
      expect(((await r.json()) as { error: string }).error).toBe("validation_error");
    }
    const nf = await from("198.51.100.3", "/v1/gallery/qqxzvvk/thumbnail");
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as { error: string }).error).toBe("service_not_found");
  });

  test("counts against no account: a key's usage is untouched", async () => {
    const key = await t.key();
    const before = (await (await t.get("/v1/usage", key)).json()) as {
      endpoints: Record<string, { used: number }>;
    };
    await t.req("/v1/gallery/search?q=slack", { headers: { "x-api-key": key } });
    await t.req("/v1/gallery/slack/thumbnail", { headers: { "x-api-key": key } });
    const after = (await (await t.get("/v1/usage", key)).json()) as typeof before;
    expect(after.endpoints).toEqual(before.endpoints);
  });

  test("per client IP: past the limit 429 rate_limit_exceeded with Retry-After; other IPs go on", async () => {
    const ip = "203.0.113.9";
    for (let i = 0; i < GALLERY_SEARCH_LIMIT.limit; i++)
      expect((await from(ip, "/v1/gallery/search?q=git")).status).toBe(200);
    const r = await from(ip, "/v1/gallery/search?q=git");
    expect(r.status).toBe(429);
    const retry = Number(r.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    const body = (await r.json()) as { error: string; reset_in_seconds: number };
    expect(body.error).toBe("rate_limit_exceeded");
    expect(body.reset_in_seconds).toBe(retry);
    expect((await from("203.0.113.10", "/v1/gallery/search?q=git")).status).toBe(200);
  });
});
