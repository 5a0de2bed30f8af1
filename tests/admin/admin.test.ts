import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, makeApp, type TestApp } from "../helpers";

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const create = (body: unknown, token: string | null = ADMIN_TOKEN) =>
  t.req("/admin/keys", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });

describe("POST /admin/keys", () => {
  test("creates an account with a key that works at once", async () => {
    const res = await create({ tier: "pro", email: "dev@acme.test" });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(["accountId", "apiKey", "keyId", "tier"]);
    expect(body.tier).toBe("pro");
    expect(body.apiKey).toStartWith("bak_");
    const ok = await t.get("/v1/catalog/github", body.apiKey);
    expect(ok.status).toBe(200);
  });

  test.each(["free", "pro", "enterprise", "internal"])("accepts tier %s", async (tier) => {
    expect((await create({ tier })).status).toBe(201);
  });

  test("wrong or missing token is 401", async () => {
    expect((await create({ tier: "free" }, "wrong-token-wrong-token")).status).toBe(401);
    const res = await create({ tier: "free" }, null);
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("unauthorized");
  });

  test("a bad tier or e-mail is 422 validation_error", async () => {
    for (const body of [{ tier: "gold" }, {}, { tier: "free", email: "not-an-email" }]) {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect((await res.json()).error).toBe("validation_error");
    }
  });

  test("PATCH /admin/accounts/:id changes tier and limits", async () => {
    const { accountId, apiKey } = await (await create({ tier: "free" })).json();
    const res = await t.req(`/admin/accounts/${accountId}`, {
      method: "PATCH",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ tier: "enterprise", limits: { svg: 100000 } }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accountId, tier: "enterprise", limits: { svg: 100000 } });
    expect((await t.deps.accounts.verifyKey(apiKey))?.tier).toBe("enterprise");
    const missing = await t.req("/admin/accounts/nope", {
      method: "PATCH",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ tier: "pro" }),
    });
    expect(missing.status).toBe(404);
  });
});

describe("without ADMIN_TOKEN", () => {
  test("the admin routes do not exist", async () => {
    const bare = await makeApp({ ADMIN_TOKEN: "" });
    try {
      const res = await bare.req("/admin/keys", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer anything-at-all" },
        body: JSON.stringify({ tier: "free" }),
      });
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe("not_found");
    } finally {
      await bare.close();
    }
  });
});

describe("npm run admin -- keys create", () => {
  test("prints a key the service accepts", async () => {
    const proc = Bun.spawn(
      [process.execPath, "scripts/admin.ts", "keys", "create", "--tier", "pro"],
      {
        env: {
          ...process.env,
          DATA_DIR: t.deps.config.DATA_DIR,
          CATALOG_FILE: t.deps.config.CATALOG_FILE,
        },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(await proc.exited).toBe(0);
    const issued = JSON.parse(await new Response(proc.stdout).text());
    expect(issued.tier).toBe("pro");
    // the running app (same DATA_DIR) sees the new key without a restart
    expect((await t.get("/v1/catalog/github", issued.apiKey)).status).toBe(200);
  });

  test("rejects an unknown tier", async () => {
    const proc = Bun.spawn(
      [process.execPath, "scripts/admin.ts", "keys", "create", "--tier", "gold"],
      {
        env: { ...process.env, DATA_DIR: t.deps.config.DATA_DIR },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("--tier");
  });
});
