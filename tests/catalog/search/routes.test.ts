/**
 * GET /v1/search through the real app (embedded store in a temp dir, real catalog).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;

interface SearchBody {
  matches: { id: number; slug: string; name: string; svgVariants: null; _notice: string }[];
  query: string;
  total: number;
}

const search = async (qs: string, k = key) => {
  const r = await t.get(`/v1/search${qs}`, k);
  return {
    status: r.status,
    headers: r.headers,
    body: (await r.json()) as SearchBody & { error?: string; message?: string },
  };
};

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(() => t.close());

describe("query normalisation", () => {
  test("q is echoed normalized: trimmed, lower-cased, NFKC, whitespace collapsed", async () => {
    const r = await search(`?q=${encodeURIComponent("  Google \t  DRIVE ")}`);
    expect(r.status).toBe(200);
    expect(r.body.query).toBe("google drive");
    expect(r.body.matches[0]?.slug).toBe("googledrive");
    const wide = await search(`?q=${encodeURIComponent("ＧｉｔＨｕｂ")}`);
    expect(wide.body.query).toBe("github");
    expect(wide.body.matches[0]?.slug).toBe("github");
  });
  test("matches are catalog entries (ServiceResponse)", async () => {
    const r = await search("?q=stripe");
    const first = r.body.matches[0];
    expect(first).toMatchObject({ slug: "stripe", name: "Stripe", svgVariants: null });
    expect(Object.keys(first ?? {}).sort()).toEqual(
      [
        "_css",
        "_notice",
        "artwork",
        "brandColor",
        "colors",
        "darkModeColor",
        "id",
        "name",
        "provenance",
        "slug",
        "svgVariants",
      ].sort(),
    );
    expect(JSON.stringify(r.body)).not.toContain("<svg");
  });
});

describe("control characters", () => {
  test("a query with NUL and other control characters is answered, never a 500", async () => {
    // the fuzzer's case: a NUL inside a word long enough for the substring (trigram) lookup
    const q = "\u00bf`\u0000\udb77\udde0\u00d6\u009c\udb4c\udccf\u009a\uc069&;\u0083";
    for (const path of [
      `/v1/search?q=${encodeURIComponent(q)}`,
      `/v1/gallery/search?q=${encodeURIComponent(q)}&limit=6`,
    ]) {
      const r = await t.get(path, key);
      expect(r.status).toBe(200);
      expect(Array.isArray(((await r.json()) as { matches?: unknown[] }).matches)).toBe(true);
    }
    const typo = await search(`?q=${encodeURIComponent("gith\u0000ubb")}`);
    expect(typo.status).toBe(200);
  });
});

describe("query_too_short", () => {
  for (const [label, qs] of [
    ["missing q", ""],
    ["empty q", "?q="],
    ["one character", "?q=a"],
    ["one character after trimming", `?q=${encodeURIComponent("  a   ")}`],
    ["only whitespace", `?q=${encodeURIComponent(" \t ")}`],
  ] as const) {
    test(`${label}: 422 query_too_short`, async () => {
      const r = await search(qs);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("query_too_short");
      expect(r.body.message).toContain("2 characters");
    });
  }
  test("two characters pass (one astral character is one, not two)", async () => {
    expect((await search("?q=go")).status).toBe(200);
    const emoji = await search(`?q=${encodeURIComponent("😀")}`);
    expect(emoji.status).toBe(422);
    expect(emoji.body.error).toBe("query_too_short");
  });
});

describe("limit and q length", () => {
  test("default limit 20; total is the number of matches returned", async () => {
    const r = await search("?q=go");
    expect(r.body.matches).toHaveLength(20);
    expect(r.body.total).toBe(20);
  });
  test("limit 1 and 50 are accepted", async () => {
    expect((await search("?q=go&limit=1")).body.matches).toHaveLength(1);
    const max = await search("?q=go&limit=50");
    expect(max.body.matches).toHaveLength(50);
    expect(max.body.total).toBe(50);
  });
  test("total counts the matches returned, also when there are fewer than limit", async () => {
    const r = await search("?q=qxzjvkw");
    expect(r.body).toMatchObject({ matches: [], total: 0, query: "qxzjvkw" });
  });
  for (const limit of ["0", "51", "-1", "abc", "2.5"]) {
    test(`limit=${limit}: 422 validation_error naming limit`, async () => {
      const r = await search(`?q=go&limit=${limit}`);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("validation_error");
      expect(r.body.message).toContain("limit");
    });
  }
  test("q up to 100 characters; 101 is 422 validation_error", async () => {
    expect((await search(`?q=${"a".repeat(100)}`)).status).toBe(200);
    const r = await search(`?q=${"a".repeat(101)}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_error");
    expect(r.body.message).toContain("q");
  });
});

describe("auth and metering", () => {
  test("no key: 401 invalid_api_key (before any 422)", async () => {
    const r = await t.req("/v1/search?q=a");
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
  });
  test("counts against the search bucket, with rate-limit headers", async () => {
    const free = await t.key("free");
    const r = await search("?q=github", free);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("30");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("29");
    await search("?q=a", free); // a 422 answer counts too (the quota outcome rule)
    const usage = (await (await t.get("/v1/usage", free)).json()) as {
      endpoints: Record<string, { used: number; limit: number | null }>;
    };
    expect(usage.endpoints.search).toEqual({ used: 2, limit: 30 });
    expect(usage.endpoints.domain?.used).toBe(0);
  });
});

describe("OpenAPI", () => {
  test("the route is documented with its parameters and error statuses", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<
        string,
        { get?: { description?: string; responses?: Record<string, unknown> } }
      >;
    };
    const op = doc.paths["/v1/search"]?.get;
    expect(op?.description).toContain("query_too_short");
    expect(Object.keys(op?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "422", "429"]),
    );
  });
});
