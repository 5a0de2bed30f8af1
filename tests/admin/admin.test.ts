import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

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
    await expectError(
      await create({ tier: "free" }, "wrong-token-wrong-token"),
      401,
      "unauthorized",
    );
    const res = await create({ tier: "free" }, null);
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("unauthorized");
  });

  test("the token is checked before the body: no token, bad body or bad JSON is still 401", async () => {
    for (const body of ['{"tier":"gold"}', "{bad", ""]) {
      const res = await t.req("/admin/keys", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer wrong-token" },
        body,
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("unauthorized");
    }
  });

  test.each([
    [{ tier: "enterprise", limits: { svgs: 5 } }, "limits.svgs: unknown bucket"],
    [{ tier: "enterprise", limits: { svg: "2" } }, "limits.svg: must be an integer"],
    [{ tier: "enterprise", limits: { svg: 1e300 } }, "limits.svg: must be an integer"],
    [{ tier: "enterprise", limits: { svg: -1 } }, "limits.svg: must be an integer"],
    [{ tier: "enterprise", limits: { svg: 2.5 } }, "limits.svg: must be an integer"],
    [{ tier: "enterprise", limits: [5] }, "limits: must be an object"],
    [{ tier: "pro", limits: { svg: 5 } }, "enterprise accounts only"],
  ])("limits %j are 422 naming the field", async (body, named) => {
    const res = await create(body);
    expect(res.status).toBe(422);
    const err = await res.json();
    expect(err.error).toBe("validation_error");
    expect(err.message).toContain(named);
  });

  test("enterprise limits at the bounds (0, 1e9, null) are accepted", async () => {
    const res = await create({ tier: "enterprise", limits: { svg: 0, png: 1e9, webp: null } });
    expect(res.status).toBe(201);
    const { accountId } = await res.json();
    expect((await t.deps.accounts.getAccount(accountId))?.limits).toEqual({
      svg: 0,
      png: 1e9,
      webp: null,
    });
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
    expect(await proc.exited).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain("--tier");
  });

  test("checks --limits like the admin route", async () => {
    const run = (...args: string[]) =>
      Bun.spawn([process.execPath, "scripts/admin.ts", "keys", "create", ...args], {
        env: { ...process.env, DATA_DIR: t.deps.config.DATA_DIR },
        stdout: "pipe",
        stderr: "pipe",
      });
    const unknown = run("--tier", "enterprise", "--limits", '{"svgs":5}');
    expect(await unknown.exited).toBe(1);
    expect(await new Response(unknown.stderr).text()).toContain("--limits.svgs: unknown bucket");
    const wrongTier = run("--tier", "free", "--limits", '{"svg":5}');
    expect(await wrongTier.exited).toBe(1);
    expect(await new Response(wrongTier.stderr).text()).toContain("enterprise accounts only");
  });
});
