import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { canonicalQuery, signPath, webCryptoMac } from "../../packages/client/src/signing";
import { type AuthTestApp, makeAuthApp } from "../accounts/helpers";
import { PNG_SIGNATURE, pngSize } from "../assets/util";
import { createEnterprise } from "../support/app";
import { expectError } from "../support/errors";
import { accountEvents } from "../usage/util";

// argon2id (register, delete) is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

let t: AuthTestApp;
let pro: string;
/** quota and key-store calls, to show refused signatures touch neither */
const calls = { consume: 0, findByKeyId: 0 };

beforeAll(async () => {
  t = await makeAuthApp();
  pro = await t.key("pro");
  const quota = t.deps.quota;
  const consume = quota.consume.bind(quota);
  quota.consume = (...args) => {
    calls.consume++;
    return consume(...args);
  };
  const store = t.deps.store.accounts;
  const find = store.findByKeyId.bind(store);
  store.findByKeyId = (id) => {
    calls.findByKeyId++;
    return find(id);
  };
});
afterAll(() => t.close());

type Issued = { urls: { url: string; path: string }[]; expiresAt: string; kid: string };

async function issue(key: string, images: unknown[], expiresIn?: number): Promise<Issued> {
  const r = await t.post("/v1/image-urls", key, { images, expiresIn });
  expect(r.status).toBe(200);
  return (await r.json()) as Issued;
}

async function one(key: string, image: Record<string, unknown>, expiresIn?: number) {
  return (await issue(key, [image], expiresIn)).urls[0]!.path;
}

const errorOf = async (r: Response) => (await r.json()) as { error: string; message: string };

/** The request refused without a quota unit taken or a key looked up. */
async function refusedUntouched(path: string, status: number, code: string) {
  const before = { ...calls };
  const r = await t.req(path);
  expect(r.status).toBe(status);
  expect((await errorOf(r)).error).toBe(code);
  expect(calls).toEqual(before);
}

describe("POST /v1/image-urls and GET /i/{file}", () => {
  test("a signed PNG URL answers the image with immutable caching and a strong ETag", async () => {
    const issued = await issue(pro, [{ slug: "github", format: "png", size: 64, dpr: 2 }], 3600);
    const { path, url } = issued.urls[0]!;
    expect(path).toMatch(
      /^\/i\/github\.png\?dpr=2&exp=\d+&kid=[0-9a-f]{16}&size=64&sig=[\w-]{43}$/,
    );
    expect(url).toBe(`${t.deps.config.PUBLIC_URL}${path}`);
    expect(Date.parse(issued.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const r = await t.req(path);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(pngSize(bytes)).toEqual({ width: 128, height: 128 });
    const cc = r.headers.get("cache-control") ?? "";
    const maxAge = Number(/max-age=(\d+)/.exec(cc)?.[1]);
    expect(cc).toMatch(/^public, max-age=\d+, immutable$/);
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
    const etag = r.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/
    expect(r.headers.get("vary")).toBeNull();
    expect(r.headers.get("x-ratelimit-limit")).toBe("2000");
    // revalidation: 304 with the same caching headers, counted like the 200
    const again = await t.req(path, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("cache-control")).toMatch(/immutable$/);
    expect(Number(again.headers.get("x-ratelimit-remaining"))).toBe(
      Number(r.headers.get("x-ratelimit-remaining")) - 1,
    );
  });

  test("a domain is resolved to its brand's slug when the URL is signed; svg gets the SVG headers", async () => {
    const path = await one(pro, { domain: "www.github.com", format: "svg" });
    expect(path.startsWith("/i/github.svg?")).toBe(true);
    const r = await t.req(path);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/svg+xml");
    expect(r.headers.get("content-security-policy")).toContain("sandbox");
    expect(await r.text()).toStartWith("<svg");
  });

  test("bad issuance requests are 4xx naming the image", async () => {
    const cases: [unknown, number, string][] = [
      [{ slug: "github", domain: "github.com", format: "png" }, 422, "images[0]"],
      [{ format: "png" }, 422, "images[0]"],
      [{ slug: "no-such-brand-zz", format: "png" }, 404, "images[0]"],
      [{ domain: "no-such-brand-zz.example", format: "svg" }, 404, "images[0]"],
      [{ slug: "github", format: "svg", size: 64 }, 422, "size and dpr"],
      [{ slug: "github", format: "png", size: 2048, dpr: 2 }, 422, "2048"],
    ];
    for (const [image, status, text] of cases) {
      const r = await t.post("/v1/image-urls", pro, { images: [image] });
      expect(r.status).toBe(status);
      expect((await errorOf(r)).message).toContain(text);
    }
    const long = await t.post("/v1/image-urls", pro, {
      images: [{ slug: "github", format: "png" }],
      expiresIn: 31 * 86_400,
    });
    expect(long.status).toBe(422);
    await expectError(await t.req("/v1/image-urls", { method: "POST" }), 401, "invalid_api_key");
  });

  test("an altered, added or removed parameter, or another path: 403 invalid_signature, nothing counted", async () => {
    const path = await one(pro, { slug: "github", format: "png", size: 64, variant: "mono" });
    const altered = [
      path.replace("size=64", "size=65"),
      path.replace("variant=mono", "variant=color"),
      path.replace("/i/github.png", "/i/github.webp"),
      path.replace("/i/github.png", "/i/gitlab.png"),
      path.replace("&size=64", ""),
      `${path}&greyscale=true`,
      path.replace(/exp=(\d+)/, (_, e) => `exp=${Number(e) + 1}`),
      path.replace(/sig=[\w-]+/, "sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      path.replace(/&sig=[\w-]+/, "&sig=short"),
    ];
    for (const p of altered) await refusedUntouched(p, 403, "invalid_signature");
    // the same parameters in another order are the same signed URL
    const [file, query] = path.split("?") as [string, string];
    const reordered = `${file}?${query.split("&").reverse().join("&")}`;
    expect((await t.req(reordered)).status).toBe(200);
  });

  test("a URL whose kid names another key fails its signature", async () => {
    const other = await one(await t.key("pro"), { slug: "github", format: "svg" });
    const mine = await one(pro, { slug: "github", format: "svg" });
    const otherKid = /kid=([0-9a-f]+)/.exec(other)?.[1] as string;
    await refusedUntouched(
      mine.replace(/kid=[0-9a-f]+/, `kid=${otherKid}`),
      403,
      "invalid_signature",
    );
  });

  test("past exp: 403 url_expired; exp more than 30 days ahead: 403; neither touches a store", async () => {
    const secret = await t.get("/v1/image-urls/signing-secret", pro);
    const { kid, secret: s } = (await secret.json()) as { kid: string; secret: string };
    const key = await webCryptoMac(s);
    const now = Math.floor(Date.now() / 1000);
    await refusedUntouched(
      await signPath(key, "/i/github.svg", {}, now - 1, kid),
      403,
      "url_expired",
    );
    await refusedUntouched(
      await signPath(key, "/i/github.svg", {}, now + 31 * 86_400, kid),
      403,
      "invalid_signature",
    );
    // signed locally, within 30 days: works without POST /v1/image-urls
    const local = await signPath(key, "/i/github.png", { size: "32" }, now + 60, kid);
    expect((await t.req(local)).status).toBe(200);
  });

  test("no signature and no key: 401; the signing secret needs an API key", async () => {
    const r = await t.req("/i/github.svg");
    expect(r.status).toBe(401);
    expect((await errorOf(r)).error).toBe("invalid_api_key");
    await expectError(await t.req("/v1/image-urls/signing-secret"), 401, "invalid_api_key");
    const s = await t.get("/v1/image-urls/signing-secret", pro);
    expect(s.headers.get("cache-control")).toBe("no-store");
  });

  test("regenerating the key stops its URLs (403 url_revoked); the new key's URLs work", async () => {
    const reg = await t.register("regen-images@example.com");
    const path = await one(reg.apiKey, { slug: "github", format: "svg" });
    expect((await t.req(path)).status).toBe(200);
    const session = await t.login("regen-images@example.com");
    const r = await t.json("/auth/api-key/regenerate", {}, { bearer: session.accessToken });
    const { apiKey } = (await r.json()) as { apiKey: string };
    const gone = await t.req(path);
    expect(gone.status).toBe(403);
    expect((await errorOf(gone)).error).toBe("url_revoked");
    expect((await t.req(await one(apiKey, { slug: "github", format: "svg" }))).status).toBe(200);
  });

  test("deleting the account stops its URLs", async () => {
    const reg = await t.register("delete-images@example.com");
    const path = await one(reg.apiKey, { slug: "github", format: "png", size: 32 });
    expect((await t.req(path)).status).toBe(200);
    const session = await t.login("delete-images@example.com");
    const del = await t.json(
      "/auth/me",
      { password: "correct horse battery" },
      { method: "DELETE", bearer: session.accessToken },
    );
    expect(del.status).toBe(204);
    const gone = await t.req(path);
    expect(gone.status).toBe(403);
    expect((await errorOf(gone)).error).toBe("url_revoked");
  });

  test("requests through /i/ share the key's buckets with header requests, then 429", async () => {
    const { apiKey, accountId } = await createEnterprise(t, { png: 3, svg: 100 });
    expect((await t.get("/v1/png/github?size=32", apiKey)).status).toBe(200);
    const path = await one(apiKey, { slug: "github", format: "png", size: 32 });
    const first = await t.req(path);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await t.req(path)).status).toBe(200);
    const refused = await t.req(path);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body.error).toBe("rate_limit_exceeded");
    expect(body.message).toContain("Daily limit of 3 png requests");
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectError(await t.get("/v1/png/github?size=32", apiKey), 429, "rate_limit_exceeded");
    // the svg bucket is separate
    expect((await t.req(await one(apiKey, { slug: "github", format: "svg" }))).status).toBe(200);
    // usage events of the /i/ requests, under the key, in the analytics store
    await t.deps.usage.flush();
    const day = new Date().toISOString().slice(0, 10);
    const events = await accountEvents(t.deps.store.usage, accountId, day);
    const viaUrl = events.filter((e) => e.route === "/i/:file");
    expect(viaUrl.map((e) => `${e.bucket} ${e.status} ${e.slug}`).sort()).toEqual([
      "png 200 github",
      "png 200 github",
      "png 429 github",
      "svg 200 github",
    ]);
    const rows = await t.deps.store.usage.daily(accountId, day, day);
    const png = rows.find((row) => row.bucket === "png");
    expect(png).toMatchObject({ requests: 5, rateLimited: 2 });
  });

  test("format=auto answers WebP to browsers that take it, PNG otherwise, with Vary: Accept", async () => {
    const path = await one(pro, { slug: "github", format: "auto", size: 32 });
    expect(path.startsWith("/i/github?")).toBe(true);
    const webp = await t.req(path, { headers: { accept: "image/avif,image/webp,*/*" } });
    expect(webp.headers.get("content-type")).toBe("image/webp");
    expect(webp.headers.get("vary")).toBe("Accept");
    const png = await t.req(path, { headers: { accept: "image/*" } });
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(webp.headers.get("etag")).not.toBe(png.headers.get("etag"));
  });

  test("the signed URL's canonical query is sorted and percent-encoded", () => {
    expect(
      canonicalQuery([
        ["size", "64"],
        ["bg", "#fff"],
        ["a b", "c&d"],
      ]),
    ).toBe("a%20b=c%26d&bg=%23fff&size=64");
  });
});
